import { ArgumentMetadata, Injectable, PipeTransform, ValidationError, ValidationPipe } from '@nestjs/common';
import { ApiError } from './errors/api-error.js';
import { ErrorCode } from './errors/error-code.js';

function firstMessages(errors: ValidationError[], parent = ''): string[] {
  return errors.flatMap((error) => {
    const path = parent ? `${parent}.${error.property}` : error.property;
    const own = error.constraints ? [Object.values(error.constraints)[0]] : [];
    return [...own, ...firstMessages(error.children ?? [], path)];
  });
}

/** A DTO class may recognise values that certainly pass its rules and build its instance itself (`parseValid`). */
interface ParsesValid {
  parseValid?(value: unknown): object | undefined;
}

/** Bodies are closed: an unknown property is a 400. The OpenAPI document says so with `additionalProperties`. */
export const BODIES_REJECT_UNKNOWN_PROPERTIES = true;

const exceptionFactory = (errors: ValidationError[]) =>
  new ApiError(400, ErrorCode.ValidationFailed, `${firstMessages(errors).join('; ')}.`);

/**
 * The global pipe. Bodies are strict (unknown properties, including `id`,
 * are rejected); queries ignore unknown parameters; path parameters are left
 * to their own pipes, so no implicit string-to-number conversion runs.
 */
@Injectable()
export class RequestValidationPipe implements PipeTransform {
  private readonly body = new ValidationPipe({
    transform: true,
    whitelist: true,
    forbidNonWhitelisted: BODIES_REJECT_UNKNOWN_PROPERTIES,
    validationError: { target: false, value: false },
    exceptionFactory,
  });

  private readonly query = new ValidationPipe({
    transform: true,
    whitelist: true,
    forbidNonWhitelisted: false,
    validationError: { target: false, value: false },
    exceptionFactory,
  });

  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type === 'body') {
      if (value !== undefined && (value === null || typeof value !== 'object' || Array.isArray(value))) {
        throw new ApiError(400, ErrorCode.ValidationFailed, 'The request body must be a JSON object.');
      }
      return this.parseValid(value, metadata) ?? this.body.transform(value ?? {}, metadata);
    }
    if (metadata.type === 'query') return this.parseValid(value, metadata) ?? this.query.transform(value, metadata);
    return value;
  }

  /** Resolves like ValidationPipe.transform does; `undefined` when the DTO leaves the value to it. */
  private parseValid(value: unknown, { metatype }: ArgumentMetadata): Promise<object> | undefined {
    const parsed = (metatype as ParsesValid | undefined)?.parseValid?.(value);
    return parsed === undefined ? undefined : Promise.resolve(parsed);
  }
}

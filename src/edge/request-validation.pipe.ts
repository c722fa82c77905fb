import { ArgumentMetadata, Injectable, PipeTransform, ValidationError, ValidationPipe } from '@nestjs/common';
import { validateSync, type ValidatorOptions } from 'class-validator';
import { ApiError } from './errors/api-error.js';
import { ErrorCode } from './errors/error-code.js';

function firstMessages(errors: ValidationError[], parent = ''): string[] {
  return errors.flatMap((error) => {
    const path = parent ? `${parent}.${error.property}` : error.property;
    const own = error.constraints ? [Object.values(error.constraints)[0]] : [];
    return [...own, ...firstMessages(error.children ?? [], path)];
  });
}

/** Bodies are closed: an unknown property is a 400. The OpenAPI document says so with `additionalProperties`. */
export const BODIES_REJECT_UNKNOWN_PROPERTIES = true;

/**
 * Nest's ValidationPipe, running the same class-validator decorators with `validateSync`: every rule of the
 * service is synchronous, and the asynchronous `validate` allocates a promise per constraint of every request.
 */
class SynchronousValidationPipe extends ValidationPipe {
  protected override validate(object: object, validatorOptions?: ValidatorOptions): ValidationError[] {
    return validateSync(object, validatorOptions);
  }
}

const exceptionFactory = (errors: ValidationError[]) =>
  new ApiError(400, ErrorCode.ValidationFailed, `${firstMessages(errors).join('; ')}.`);

/**
 * The global pipe. Bodies are strict (unknown properties, including `id`,
 * are rejected); queries ignore unknown parameters; path parameters are left
 * to their own pipes, so no implicit string-to-number conversion runs.
 */
@Injectable()
export class RequestValidationPipe implements PipeTransform {
  private readonly body = new SynchronousValidationPipe({
    transform: true,
    whitelist: true,
    forbidNonWhitelisted: BODIES_REJECT_UNKNOWN_PROPERTIES,
    validationError: { target: false, value: false },
    exceptionFactory,
  });

  private readonly query = new SynchronousValidationPipe({
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
      return this.body.transform(value ?? {}, metadata);
    }
    if (metadata.type === 'query') return this.query.transform(value, metadata);
    return value;
  }
}

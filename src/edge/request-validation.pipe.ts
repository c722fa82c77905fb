import {
  ArgumentMetadata,
  Injectable,
  PipeTransform,
  ValidationError,
  ValidationPipe,
  type ValidationPipeOptions,
} from '@nestjs/common';
import { validateSync, type ValidatorOptions } from 'class-validator';
import { LRUCache } from 'lru-cache';
import { ApiError } from './errors/api-error.js';
import { ErrorCode } from './errors/error-code.js';

const firstMessages = (errors: ValidationError[]): string[] =>
  errors.flatMap((error) => [
    ...(error.constraints ? [Object.values(error.constraints)[0]] : []),
    ...firstMessages(error.children ?? []),
  ]);

/** Nest's ValidationPipe with `validateSync`: every rule is synchronous, and `validate` allocates a promise per constraint. */
class SynchronousValidationPipe extends ValidationPipe {
  protected override validate(object: object, validatorOptions?: ValidatorOptions): ValidationError[] {
    return validateSync(object, validatorOptions);
  }
}

const OPTIONS: ValidationPipeOptions = {
  transform: true,
  whitelist: true,
  validationError: { target: false, value: false },
  exceptionFactory: (errors) => new ApiError(400, ErrorCode.ValidationFailed, `${firstMessages(errors).join('; ')}.`),
};

/** Validated queries kept at once, per query class; past it, the one kept longest ago is dropped. */
export const VALIDATED_QUERIES_MAX = 1_000;
/** A query whose JSON form is longer than this is validated every time rather than kept. */
const VALIDATED_QUERY_MAX_LENGTH = 512;

/**
 * The global pipe. Bodies are closed (an unknown property, `id` included, is a 400, as the OpenAPI document's
 * `additionalProperties` says); queries ignore unknown parameters; path parameters are left to their own pipes.
 * A query that passed is kept, frozen, by its parameters, and served again without validation (docs/performance.md).
 */
@Injectable()
export class RequestValidationPipe implements PipeTransform {
  private readonly body = new SynchronousValidationPipe({ ...OPTIONS, forbidNonWhitelisted: true });
  private readonly query = new SynchronousValidationPipe(OPTIONS);
  // Read with `peek`, which moves nothing: the query dropped is the one kept longest ago.
  private readonly validatedQueries = new Map<ArgumentMetadata['metatype'], LRUCache<string, object>>();

  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type === 'query') return this.validQuery(value, metadata);
    if (metadata.type !== 'body') return value;
    if (value !== undefined && (value === null || typeof value !== 'object' || Array.isArray(value))) {
      throw new ApiError(400, ErrorCode.ValidationFailed, 'The request body must be a JSON object.');
    }
    return this.body.transform(value ?? {}, metadata);
  }

  private validQuery(value: unknown, metadata: ArgumentMetadata): unknown {
    // The parameters as parsed from the URL, in the order sent (another order is only another entry).
    const key = JSON.stringify(value);
    const metatype = metadata.metatype;
    if (typeof metatype !== 'function' || key === undefined || key.length > VALIDATED_QUERY_MAX_LENGTH) {
      return this.query.transform(value, metadata);
    }
    let validated = this.validatedQueries.get(metatype);
    if (validated === undefined) {
      validated = new LRUCache({ max: VALIDATED_QUERIES_MAX });
      this.validatedQueries.set(metatype, validated);
    }
    const known = validated.peek(key);
    if (known !== undefined) return known;
    const cache = validated;
    return this.query.transform(value, metadata).then((query: unknown) => {
      // Only the query classes' instances: a plain object or string passed through is the request's own.
      if (query instanceof metatype) cache.set(key, Object.freeze(query as object));
      return query;
    });
  }
}

import { ArgumentMetadata, Injectable, PipeTransform, ValidationError, ValidationPipe } from '@nestjs/common';
import { validateSync, type ValidatorOptions } from 'class-validator';
import { LRUCache } from 'lru-cache';
import { ApiError } from './errors/api-error.js';
import { ErrorCode } from './errors/error-code.js';

function firstMessages(errors: ValidationError[], parent = ''): string[] {
  return errors.flatMap((error) => {
    const path = parent ? `${parent}.${error.property}` : error.property;
    const own = error.constraints ? [Object.values(error.constraints)[0]] : [];
    return [...own, ...firstMessages(error.children ?? [], path)];
  });
}

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

/** Validated queries kept at once, per query class; past it, the one kept longest ago is dropped. */
export const VALIDATED_QUERIES_MAX = 1_000;
/** A query whose JSON form is longer than this is validated every time rather than kept. */
const VALIDATED_QUERY_MAX_LENGTH = 512;

/**
 * The global pipe. Bodies are strict (unknown properties, including `id`,
 * are rejected); queries ignore unknown parameters; path parameters are left
 * to their own pipes, so no implicit string-to-number conversion runs.
 *
 * Clients send the same few queries over and over (`?limit=20`), and turning one into its class (class-transformer,
 * class-validator, then Nest's clean-up) would redo the same work each time (docs/performance.md). A query that passed is therefore kept, frozen, by its parameters, and the same parameters get the same instance back
 * without being validated again; a refused query is validated every time.
 */
@Injectable()
export class RequestValidationPipe implements PipeTransform {
  private readonly body = new SynchronousValidationPipe({
    transform: true,
    whitelist: true,
    // Bodies are closed: an unknown property is a 400 (the OpenAPI document says so with `additionalProperties`).
    forbidNonWhitelisted: true,
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

  // Read with `peek`, which moves nothing: the query dropped is the one kept longest ago, and a lookup costs no bookkeeping.
  private readonly validatedQueries = new Map<ArgumentMetadata['metatype'], LRUCache<string, object>>();

  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type === 'query') return this.validQuery(value, metadata);
    if (metadata.type === 'body') {
      if (value !== undefined && (value === null || typeof value !== 'object' || Array.isArray(value))) {
        throw new ApiError(400, ErrorCode.ValidationFailed, 'The request body must be a JSON object.');
      }
      return this.body.transform(value ?? {}, metadata);
    }
    return value;
  }

  private validQuery(value: unknown, metadata: ArgumentMetadata): unknown {
    // The parameters as parsed from the URL: strings, or arrays of them when repeated. Their JSON form names them
    // unambiguously, and in the order sent (another order is only another entry).
    const key = JSON.stringify(value);
    if (typeof metadata.metatype !== 'function' || key === undefined || key.length > VALIDATED_QUERY_MAX_LENGTH) {
      return this.query.transform(value, metadata);
    }
    let validated = this.validatedQueries.get(metadata.metatype);
    if (validated === undefined) {
      validated = new LRUCache({ max: VALIDATED_QUERIES_MAX });
      this.validatedQueries.set(metadata.metatype, validated);
    }
    const known = validated.peek(key);
    if (known !== undefined) return known;
    const cache = validated;
    const metatype = metadata.metatype;
    return this.query.transform(value, metadata).then((query: unknown) => {
      // Only the query classes' instances: a plain object or string passed through is the request's own.
      if (query instanceof metatype) cache.set(key, Object.freeze(query as object));
      return query;
    });
  }
}

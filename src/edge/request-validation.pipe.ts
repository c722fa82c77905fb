import { ArgumentMetadata, Injectable, PipeTransform, ValidationError, ValidationPipe } from '@nestjs/common';
import { validateSync, type ValidatorOptions } from 'class-validator';
import { LRUCache } from 'lru-cache';
import { validationFailed } from './errors/api-error.js';

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

const OPTIONS = {
  transform: true,
  whitelist: true,
  validationError: { target: false, value: false },
  exceptionFactory: (errors: ValidationError[]) => validationFailed(`${firstMessages(errors).join('; ')}.`),
};

export const VALIDATED_QUERIES_MAX = 1_000;
const VALIDATED_QUERY_MAX_LENGTH = 512;

/** Bodies are closed, queries ignore unknown parameters; a valid query is kept, frozen (docs/performance.md). */
@Injectable()
export class RequestValidationPipe implements PipeTransform {
  private readonly body = new SynchronousValidationPipe({ ...OPTIONS, forbidNonWhitelisted: true });
  private readonly query = new SynchronousValidationPipe(OPTIONS);
  // Read with `peek`, which moves nothing: the query dropped is the one kept longest ago.
  private readonly validatedQueries = new LRUCache<string, object>({ max: VALIDATED_QUERIES_MAX });

  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type === 'query') return this.validQuery(value, metadata);
    if (metadata.type !== 'body') return value;
    if (value !== undefined && (value === null || typeof value !== 'object' || Array.isArray(value))) {
      throw validationFailed('The request body must be a JSON object.');
    }
    return this.body.transform(value ?? {}, metadata);
  }

  private validQuery(value: unknown, metadata: ArgumentMetadata): unknown {
    const metatype = metadata.metatype;
    // The parameters as parsed from the URL, in the order sent (another order is only another entry).
    const json = JSON.stringify(value);
    if (typeof metatype !== 'function' || json === undefined || json.length > VALIDATED_QUERY_MAX_LENGTH) {
      return this.query.transform(value, metadata);
    }
    // Keyed by the parameters alone: the same parameters for another query class are only validated again.
    const known = this.validatedQueries.peek(json);
    if (known instanceof metatype) return known;
    return this.query.transform(value, metadata).then((query: unknown) => {
      // Only the query classes' instances: a plain object or string passed through is the request's own.
      if (query instanceof metatype) this.validatedQueries.set(json, Object.freeze(query as object));
      return query;
    });
  }
}

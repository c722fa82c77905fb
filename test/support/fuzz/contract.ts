import fc from 'fast-check';
import type { OpenAPIObject, OperationObject, ParameterObject } from '@nestjs/swagger';
import { documentAjv, pointer, thisServerPath } from '../openapi-response-validator.js';
import { markStatedRules, STATED_RULE, STATED_RULES } from '../stated-rules.js';

export interface Schema {
  type?: string;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  allOf?: Schema[];
  $ref?: string;
  [keyword: string]: unknown;
}

/** One constraint of a schema broken, and which. */
type Break = { constraint: string; value: unknown };

export interface DocumentedOperation {
  method: string;
  /** The path template under the server's base path, e.g. `/pets/{petId}`. */
  path: string;
  operation: OperationObject;
  parameters: (ParameterObject & { schema: Schema })[];
}

const INT_BOUND = 2 ** 31;

/**
 * The served OpenAPI document as fuzzing needs it: operations by id, schemas with references resolved, values each
 * schema accepts or that break exactly one of its constraints, and whether a request body meets its schema.
 */
export class Contract {
  private readonly ajv;
  readonly basePath: string;

  /** The served document, each schema a rule in words qualifies marked with STATED_RULE. */
  readonly document: OpenAPIObject;

  constructor(document: OpenAPIObject) {
    this.document = markStatedRules(document);
    // As published: a client follows the document, so a body it leaves open must be accepted.
    this.ajv = documentAjv(document, { closed: false });
    this.basePath = thisServerPath(document);
  }

  operations(): (DocumentedOperation & { operationId: string })[] {
    return Object.entries(this.document.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([, value]) => typeof value === 'object' && value && 'responses' in value)
        .map(([method, value]) => {
          const operation = value as OperationObject;
          const parameters = (operation.parameters ?? []).map((parameter) => {
            const { schema, ...rest } = parameter as ParameterObject;
            return { ...rest, schema: this.resolve(schema as Schema) };
          });
          return { method: method.toUpperCase(), path, operation, parameters, operationId: operation.operationId! };
        }),
    );
  }

  operation(operationId: string): DocumentedOperation {
    const found = this.operations().find((candidate) => candidate.operationId === operationId);
    if (!found) throw new Error(`The document has no operation ${operationId}`);
    return found;
  }

  /** The JSON request body's schema of an operation, resolved. */
  requestBodySchema(operationId: string): Schema {
    const { operation } = this.operation(operationId);
    const body = operation.requestBody as { content: Record<string, { schema: Schema }> } | undefined;
    const schema = body?.content['application/json']?.schema;
    if (!schema) throw new Error(`${operationId} declares no JSON request body`);
    return this.resolve(schema);
  }

  /** Whether a parsed JSON body satisfies the operation's request schema and the rules it states in words. */
  acceptsBody(operationId: string, body: unknown): boolean {
    const { path, method } = this.operation(operationId);
    const ref = pointer('paths', path, method.toLowerCase(), 'requestBody', 'content', 'application/json', 'schema');
    const validate = this.ajv.getSchema(ref) ?? this.ajv.compile({ $id: ref, $ref: ref });
    return validate(body) as boolean;
  }

  /** Follows `$ref` and a lone `allOf`, keeping the keywords beside them. */
  resolve(schema: Schema): Schema {
    if (schema.$ref) {
      const name = schema.$ref.replace('#/components/schemas/', '');
      const { $ref: _ref, ...rest } = schema;
      return { ...this.resolve(this.document.components!.schemas![name] as Schema), ...rest };
    }
    if (schema.allOf?.length === 1) {
      const { allOf, ...rest } = schema;
      return { ...this.resolve(allOf[0]), ...rest };
    }
    return schema;
  }

  /** Values the schema accepts: enums, integers within bounds, strings within length and pattern, objects. */
  valid(input: Schema): fc.Arbitrary<unknown> {
    const schema = this.resolve(input);
    if (schema.enum) return fc.constantFrom(...schema.enum);
    switch (schema.type) {
      case 'integer':
        return fc
          .bigInt({ min: BigInt(schema.minimum ?? -INT_BOUND), max: BigInt(schema.maximum ?? INT_BOUND) })
          .map(Number);
      case 'string': {
        const pattern = schema.pattern === undefined ? undefined : new RegExp(schema.pattern, 'u');
        return fc
          .oneof(fc.string({ unit: 'grapheme-ascii', maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 300 }))
          .filter((value) => {
            const length = [...value].length;
            return (
              length >= (schema.minLength ?? 0) &&
              length <= (schema.maxLength ?? Infinity) &&
              (pattern === undefined || pattern.test(value)) &&
              (typeof schema[STATED_RULE] !== 'string' || STATED_RULES[schema[STATED_RULE]](value))
            );
          });
      }
      case 'object': {
        const properties = Object.fromEntries(
          Object.entries(schema.properties ?? {}).map(([name, property]) => [name, this.valid(property)]),
        );
        return fc.record(properties, { requiredKeys: schema.required ?? [] });
      }
      default:
        throw new Error(`No generator for the schema ${JSON.stringify(schema)}`);
    }
  }

  /** Values that break exactly one constraint of a scalar schema, as JSON values. */
  jsonBreaks(input: Schema): Break[] {
    const schema = this.resolve(input);
    const breaks: Break[] = [{ constraint: 'type (null)', value: null }];
    if (schema.enum) breaks.push({ constraint: 'enum', value: `${String(schema.enum[0])}x` });
    if (typeof schema.enum?.[0] === 'string')
      breaks.push({ constraint: 'enum (case)', value: schema.enum[0].toUpperCase() });
    if (schema.type === 'integer') {
      breaks.push({ constraint: 'type (string)', value: String(schema.minimum ?? 1) });
      breaks.push({ constraint: 'type (fraction)', value: (schema.minimum ?? 0) + 0.5 });
      breaks.push({ constraint: 'type (boolean)', value: true });
    }
    if (schema.type === 'string' || schema.enum) breaks.push({ constraint: 'type (number)', value: 42 });
    if (schema.minimum !== undefined) breaks.push({ constraint: 'minimum', value: schema.minimum - 1 });
    if (schema.maximum !== undefined) breaks.push({ constraint: 'maximum', value: schema.maximum + 1 });
    if (schema.minLength) breaks.push({ constraint: 'minLength', value: 'x'.repeat(schema.minLength - 1) });
    if (schema.maxLength !== undefined)
      breaks.push({ constraint: 'maxLength', value: 'x'.repeat(schema.maxLength + 1) });
    return breaks;
  }

  /** Values that break exactly one constraint of a scalar schema, as query-string text. */
  queryBreaks(input: Schema): Break[] {
    const schema = this.resolve(input);
    const breaks: Break[] = [{ constraint: 'empty', value: '' }];
    if (schema.enum) {
      breaks.push({ constraint: 'enum', value: `${String(schema.enum[0])}x` });
      breaks.push({ constraint: 'enum (case)', value: String(schema.enum[0]).toUpperCase() });
    }
    if (schema.type === 'integer') {
      breaks.push({ constraint: 'type (word)', value: 'ten' });
      breaks.push({ constraint: 'type (fraction)', value: `${schema.minimum ?? 0}.5` });
    }
    if (schema.minimum !== undefined) breaks.push({ constraint: 'minimum', value: String(schema.minimum - 1) });
    if (schema.maximum !== undefined) breaks.push({ constraint: 'maximum', value: String(schema.maximum + 1) });
    return breaks;
  }

  /** Objects breaking one constraint of an object schema: a property's own constraint, a required member, closure. */
  objectBreaks(input: Schema): fc.Arbitrary<{ constraint: string; body: Record<string, unknown> }> {
    const schema = this.resolve(input);
    const valid = this.valid(schema) as fc.Arbitrary<Record<string, unknown>>;
    const mutations: { constraint: string; apply: (body: Record<string, unknown>) => Record<string, unknown> }[] = [
      ...Object.entries(schema.properties ?? {}).flatMap(([name, property]) =>
        this.jsonBreaks(property).map(({ constraint, value }) => ({
          constraint: `${name}: ${constraint}`,
          apply: (body: Record<string, unknown>) => ({ ...body, [name]: value }),
        })),
      ),
      ...(schema.required ?? []).map((name) => ({
        constraint: `${name}: required`,
        apply: ({ [name]: _removed, ...body }: Record<string, unknown>) => body,
      })),
      { constraint: 'additional property', apply: (body) => ({ ...body, unexpected: 1 }) },
    ];
    return fc
      .tuple(valid, fc.constantFrom(...mutations))
      .map(([body, mutation]) => ({ constraint: mutation.constraint, body: mutation.apply(body) }));
  }
}

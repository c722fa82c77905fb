// Hand-written glue: @nestjs/swagger exports no per-class schema builder, so the schemas are taken from its document.
import type { OpenAPIObject, ResponseObject } from '@nestjs/swagger';
import fp from 'fastify-plugin';

type Schema = Record<string, unknown>;

/** A copy with each `$ref` replaced by its component, whose own `$ref`s the replacer then meets too. */
const inlineRefs = (schema: unknown, { components }: OpenAPIObject): Schema =>
  JSON.parse(
    JSON.stringify(schema, (_key, value: { $ref?: unknown } | null) =>
      typeof value?.$ref === 'string' ? components?.schemas?.[value.$ref.replace('#/components/schemas/', '')] : value,
    ),
  ) as Schema;

/** `/pets/{petId}` under the `/v1` server as Fastify writes it: `/v1/pets/:petId`. */
const fastifyUrl = (prefix: string, path: string) => `/${prefix}${path.replace(/\{([^}]+)\}/g, ':$1')}`;

export function successResponseSchemas(document: OpenAPIObject, prefix: string): Map<string, Record<string, Schema>> {
  const schemas = new Map<string, Record<string, Schema>>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const { responses = {} } = operation as { responses?: Record<string, ResponseObject> };
      const byStatus: Record<string, Schema> = {};
      for (const [status, response] of Object.entries(responses)) {
        const schema = response.content?.['application/json']?.schema;
        if (/^2\d\d$/.test(status) && schema) byStatus[status] = inlineRefs(schema, document);
      }
      if (Object.keys(byStatus).length > 0)
        schemas.set(`${method.toUpperCase()} ${fastifyUrl(prefix, path)}`, byStatus);
    }
  }
  return schemas;
}

/** Routes registered from now on serialise their 2xx bodies with fast-json-stringify, from the document's schemas. */
export const serializeResponsesWithDocumentSchemas = fp<{ document: OpenAPIObject; prefix: string }>(
  (fastify, { document, prefix }, done) => {
    const schemas = successResponseSchemas(document, prefix);
    fastify.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) {
        const response = schemas.get(`${method} ${route.url}`);
        if (response)
          route.schema = { ...route.schema, response: { ...response, ...(route.schema?.response as object) } };
      }
    });
    done();
  },
  { name: 'document-response-schemas' },
);

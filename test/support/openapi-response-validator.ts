import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import ajvFormats from 'ajv-formats';
import type { OpenAPIObject, OperationObject, ResponseObject } from '@nestjs/swagger';

// ajv-formats is CommonJS: the plugin is the module itself, typed as its `default`.
const addFormats = ajvFormats.default;

const DOCUMENT_ID = 'openapi.json';
const OPERATION_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export interface ResponseToValidate {
  status: number;
  headers: Headers;
  text: string;
}

interface Route {
  template: string;
  pattern: RegExp;
  operations: Partial<Record<string, OperationObject>>;
}

export const pointer = (...segments: string[]) =>
  `${DOCUMENT_ID}#/${segments.map((s) => s.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;

/**
 * Response bodies may carry nothing the document does not list: every object
 * schema with `properties` is closed here (the served document stays open).
 */
function closeObjectSchemas(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(closeObjectSchemas);
  if (!node || typeof node !== 'object') return;
  const schema = node as Record<string, unknown>;
  if (schema.properties && typeof schema.properties === 'object' && schema.additionalProperties === undefined) {
    schema.additionalProperties = false;
  }
  Object.values(schema).forEach(closeObjectSchemas);
}

const describeErrors = (errors: ErrorObject[] | null | undefined) =>
  (errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message ?? ''}`).join('; ');

/**
 * An Ajv holding the document (as `openapi.json`, with `pointer()` addressing
 * its schemas) and the OpenAPI formats, with every object schema closed.
 */
export function closedDocumentAjv(document: OpenAPIObject): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  ajv.addFormat('int64', { type: 'number', validate: (value: number) => Number.isSafeInteger(value) });
  ajv.addFormat('int32', {
    type: 'number',
    validate: (value: number) => Number.isInteger(value) && value >= -(2 ** 31) && value < 2 ** 31,
  });
  const closed = structuredClone(document);
  closeObjectSchemas(closed.components?.schemas);
  closeObjectSchemas(closed.paths);
  ajv.addSchema(closed, DOCUMENT_ID);
  return ajv;
}

/**
 * Checks that a response is one the OpenAPI document describes: the operation
 * found by method and path template declares the status, its required headers
 * are present, and the body is JSON matching the declared schema. A request
 * no operation describes must be answered with an `Error`, unless it is
 * outside the API's base path (the docs routes) and succeeded.
 */
export class OpenApiResponseValidator {
  private readonly ajv: Ajv;
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly routes: Route[];
  private readonly basePath: string;

  constructor(document: OpenAPIObject) {
    this.ajv = closedDocumentAjv(document);

    const relativeServer = document.servers?.find((server) => server.url.startsWith('/'));
    if (!relativeServer) throw new Error('The OpenAPI document lists no server relative to the service itself.');
    this.basePath = relativeServer.url.replace(/\/$/, '');
    this.routes = Object.entries(document.paths).map(([template, item]) => ({
      template,
      pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
      operations: Object.fromEntries(
        OPERATION_METHODS.filter((method) => item[method]).map((method) => [method, item[method]]),
      ),
    }));
  }

  /** Throws an Error describing how the response departs from the document. */
  validate(method: string, url: URL, response: ResponseToValidate): void {
    const verb = method.toUpperCase();
    const where = `${verb} ${url.pathname}${url.search} answered ${response.status}`;
    const problem = this.problem(verb, url.pathname, response);
    if (problem) {
      const body = response.text.slice(0, 500);
      throw new Error(`Response not described by the OpenAPI document: ${where}: ${problem}\nBody: ${body}`);
    }
  }

  private problem(verb: string, pathname: string, response: ResponseToValidate): string | undefined {
    const found = this.findOperation(verb, pathname);
    if (!found) {
      if (response.status >= 400) return this.bodyProblem(verb, response, pointer('components', 'schemas', 'Error'));
      if (pathname === this.basePath || pathname.startsWith(`${this.basePath}/`)) {
        return 'no operation is documented for this method and path';
      }
      return undefined;
    }

    const { template, method, operation } = found;
    const statusKey = [String(response.status), `${String(response.status)[0]}XX`, 'default'].find(
      (key) => operation.responses[key],
    );
    if (!statusKey) {
      const listed = Object.keys(operation.responses).join(', ');
      return `status ${response.status} is not declared for ${operation.operationId} (declared: ${listed})`;
    }
    const declared = operation.responses[statusKey] as ResponseObject;
    const missing = Object.entries(declared.headers ?? {})
      .filter(([name, header]) => 'required' in header && header.required && !response.headers.has(name))
      .map(([name]) => name);
    if (missing.length > 0) return `required header(s) missing: ${missing.join(', ')}`;

    if (!declared.content) return response.text === '' ? undefined : 'a body was sent where none is declared';
    if (!declared.content['application/json']) return 'the declared response is not application/json';
    return this.bodyProblem(
      verb,
      response,
      pointer('paths', template, method, 'responses', statusKey, 'content', 'application/json', 'schema'),
    );
  }

  private bodyProblem(verb: string, response: ResponseToValidate, schemaRef: string): string | undefined {
    const contentType = response.headers.get('content-type') ?? '';
    if (!/^application\/json(;|$)/.test(contentType)) return `content-type is "${contentType}", not application/json`;
    if (verb === 'HEAD') return undefined;
    let body: unknown;
    try {
      body = JSON.parse(response.text);
    } catch {
      return 'the body is not JSON';
    }
    const validate = this.validatorFor(schemaRef);
    if (!validate(body)) return `the body does not match ${schemaRef}: ${describeErrors(validate.errors)}`;
    if (response.status >= 400 && (body as { status?: unknown }).status !== response.status) {
      return 'the Error body\'s status differs from the HTTP status';
    }
    return undefined;
  }

  private findOperation(verb: string, pathname: string) {
    if (!pathname.startsWith(`${this.basePath}/`)) return undefined;
    const relative = pathname.slice(this.basePath.length);
    const route = this.routes.find((candidate) => candidate.pattern.test(relative));
    // Fastify answers HEAD with the GET route's headers and no body.
    const method = verb === 'HEAD' && !route?.operations.head ? 'get' : verb.toLowerCase();
    const operation = route?.operations[method];
    return route && operation ? { template: route.template, method, operation } : undefined;
  }

  private validatorFor(schemaRef: string): ValidateFunction {
    let validate = this.validators.get(schemaRef);
    if (!validate) {
      validate = this.ajv.compile({ $ref: schemaRef });
      this.validators.set(schemaRef, validate);
    }
    return validate;
  }
}

const validators = new Map<string, Promise<OpenApiResponseValidator>>();

/** The validator for the document a running service serves at /docs-json, fetched once per origin. */
export function responseValidatorFor(origin: string): Promise<OpenApiResponseValidator> {
  let validator = validators.get(origin);
  if (!validator) {
    validator = fetch(`${origin}/docs-json`).then(async (response) => {
      if (response.status !== 200) {
        throw new Error(`Cannot validate responses: GET ${origin}/docs-json answered ${response.status}`);
      }
      return new OpenApiResponseValidator((await response.json()) as OpenAPIObject);
    });
    validators.set(origin, validator);
    validator.catch(() => validators.delete(origin));
  }
  return validator;
}

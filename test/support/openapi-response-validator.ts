import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import ajvFormats from 'ajv-formats';
import type {
  HeaderObject,
  OpenAPIObject,
  OperationObject,
  ParameterObject,
  RequestBodyObject,
  ResponseObject,
  SchemaObject,
} from '@nestjs/swagger';
import { REQUEST_ID_HEADER } from '../../src/edge/request-id.js';
import { API_RESPONSE_HEADERS, NO_STORE } from '../../src/edge/security-headers.js';
import { addStatedRuleKeyword, headBeyondStatedLimit, markStatedRules } from './stated-rules.js';

// ajv-formats is CommonJS: the plugin is the module itself, typed as its `default`.
const addFormats = ajvFormats.default;

const DOCUMENT_ID = 'openapi.json';

/** The security headers every API response carries; Cache-Control is declared on each response instead. */
const apiSecurityHeaderNames = () => API_RESPONSE_HEADERS.map(([name]) => name).filter((name) => name !== NO_STORE[0]);
const OPERATION_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export interface ResponseToValidate {
  status: number;
  headers: Headers;
  text: string;
}

/** The request as it was sent, for telling a refusal the document states from one it does not. */
export interface RequestToValidate {
  headers: Headers;
  body?: string | Uint8Array;
}

/** Headers that are not the operation's: framing, security headers, the request id (described once), CORS. */
const HEADERS_OF_EVERY_RESPONSE = new Set([
  ...'content-type content-length date connection keep-alive transfer-encoding'.split(' '),
  REQUEST_ID_HEADER.toLowerCase(),
  ...apiSecurityHeaderNames(),
  ...'access-control-allow-origin access-control-expose-headers vary'.split(' '),
]);

/** Error codes that mean "the request breaks the contract"; 400 invalid_cursor has its reason in the document. */
const CONTRACT_REFUSALS = new Set(['validation_failed', 'invalid_json']);

/** A query or path value as the schema's type reads it: only a canonical decimal is an integer. */
const CANONICAL_INTEGER = /^-?(0|[1-9][0-9]*)$/;

type Route = { template: string; pattern: RegExp; operations: Partial<Record<string, OperationObject>> };
type Found = { template: string; method: string; operation: OperationObject };

export const pointer = (...segments: string[]) =>
  `${DOCUMENT_ID}#/${segments.map((s) => s.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;

function closeObjectSchemas(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(closeObjectSchemas);
  if (!node || typeof node !== 'object') return;
  const schema = node as Record<string, unknown>;
  if (schema.properties && typeof schema.properties === 'object' && schema.additionalProperties === undefined) {
    schema.additionalProperties = false;
  }
  Object.values(schema).forEach(closeObjectSchemas);
}

const errorCode = (text: string): string => {
  try {
    return String((JSON.parse(text) as { code?: unknown }).code);
  } catch {
    return '';
  }
};

const describeErrors = (errors: ErrorObject[] | null | undefined) =>
  (errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message ?? ''}`).join('; ');

/**
 * An Ajv holding the document as `openapi.json` (`pointer()` addresses its schemas), with the OpenAPI formats and
 * the rules it states in words. Closed, for responses: no field the document does not list. Open, for requests: a
 * client follows the document as published, so closing it would hide a body the document leaves open.
 */
export function documentAjv(document: OpenAPIObject, { closed }: { closed: boolean }): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
  addStatedRuleKeyword(ajv);
  addFormats(ajv);
  ajv.addFormat('int64', { type: 'number', validate: (value: number) => Number.isSafeInteger(value) });
  ajv.addFormat('int32', {
    type: 'number',
    validate: (value: number) => Number.isInteger(value) && value >= -(2 ** 31) && value < 2 ** 31,
  });
  const copy = markStatedRules(document);
  if (closed) {
    closeObjectSchemas(copy.components?.schemas);
    closeObjectSchemas(copy.paths);
  }
  ajv.addSchema(copy, DOCUMENT_ID);
  return ajv;
}

/**
 * The path of the API on the instance serving `document`: its server relative to the document, which the
 * service serves from its root (`/docs-json`), so `v1` is `/v1`.
 */
export function thisServerPath(document: OpenAPIObject): string {
  const server = document.servers?.find((candidate) => !/^[a-z][a-z0-9+.-]*:/i.test(candidate.url));
  if (!server) throw new Error('The OpenAPI document lists no server relative to the service itself.');
  return new URL(server.url, 'http://service/docs-json').pathname.replace(/\/$/, '');
}

/**
 * Checks that a response is one the OpenAPI document describes: the operation declares the status and the headers
 * sent, the required ones are present, and the body matches. A request no operation describes must be answered
 * with an `Error`, unless it is outside the API's base path (the docs routes) and succeeded.
 */
export class OpenApiResponseValidator {
  private readonly ajv: Ajv;
  private readonly requestAjv: Ajv;
  private readonly routes: Route[];
  private readonly basePath: string;

  constructor(document: OpenAPIObject) {
    this.ajv = documentAjv(document, { closed: true });
    this.requestAjv = documentAjv(document, { closed: false });

    this.basePath = thisServerPath(document);
    this.routes = Object.entries(document.paths).map(([template, item]) => ({
      template,
      pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
      operations: Object.fromEntries(
        OPERATION_METHODS.filter((method) => item[method]).map((method) => [method, item[method]]),
      ),
    }));
  }

  /**
   * Throws an Error describing how the response departs from the document. Given the request, also throws when the
   * service refused as breaking the contract a request the document (schemas and rules in words) accepts.
   */
  validate(method: string, url: URL, response: ResponseToValidate, request?: RequestToValidate): void {
    const verb = method.toUpperCase();
    const where = `${verb} ${url.pathname}${url.search} answered ${response.status}`;
    const problem = this.problem(verb, url, response, request);
    if (problem) {
      const body = response.text.slice(0, 500);
      throw new Error(`Response not described by the OpenAPI document: ${where}: ${problem}\nBody: ${body}`);
    }
  }

  private problem(verb: string, url: URL, response: ResponseToValidate, request?: RequestToValidate) {
    const pathname = url.pathname;
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
    const headers = Object.entries(declared.headers ?? {}) as [string, HeaderObject][];
    const missing = headers.filter(([name, header]) => header.required && !response.headers.has(name));
    if (missing.length > 0) return `required header(s) missing: ${missing.map(([name]) => name).join(', ')}`;
    const allowed = new Set([...HEADERS_OF_EVERY_RESPONSE, ...headers.map(([name]) => name.toLowerCase())]);
    const undeclared = [...response.headers.keys()].filter((name) => !allowed.has(name));
    if (undeclared.length > 0) return `header(s) sent but not declared for this response: ${undeclared.join(', ')}`;
    for (const [name] of headers) {
      const value = response.headers.get(name);
      if (value === null) continue;
      const schemaRef = pointer('paths', template, method, 'responses', statusKey, 'headers', name, 'schema');
      const validate = this.validatorFor(schemaRef);
      if (!validate(this.parameterValue(schemaRef, value))) {
        return `header ${name}: ${JSON.stringify(value)} ${(validate.errors ?? []).map((e) => e.message).join('; ')}`;
      }
    }
    if (request && response.status === 400 && CONTRACT_REFUSALS.has(errorCode(response.text))) {
      if (this.requestRefusal(found, url, request) === undefined)
        return 'the document accepts this request, yet the service refused it for a reason the document does not state';
    }

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
      return "the Error body's status differs from the HTTP status";
    }
    return undefined;
  }

  /** Why the document refuses the request (parameters and body), or undefined when it accepts it. */
  private requestRefusal({ template, method, operation }: Found, url: URL, request: RequestToValidate) {
    if (headBeyondStatedLimit(url, request.headers)) return 'the request line and headers may exceed the stated limit';
    const templateSegments = template.split('/');
    const segments = url.pathname.slice(this.basePath.length).split('/');
    for (const [index, parameter] of (operation.parameters ?? []).entries()) {
      const { name, in: location, required } = parameter as ParameterObject;
      let values: string[];
      if (location === 'path') {
        try {
          values = [decodeURIComponent(segments[templateSegments.indexOf(`{${name}}`)])];
        } catch {
          return `path parameter ${name} is not valid percent-encoded UTF-8`;
        }
      } else if (location === 'query') {
        values = url.searchParams.getAll(name);
      } else if (location === 'header') {
        values = request.headers.has(name) ? [request.headers.get(name)!] : [];
      } else {
        continue;
      }
      if (values.length === 0) {
        if (required) return `${name} is missing`;
        continue;
      }
      if (values.length > 1) return `${name} is repeated`;
      const schemaRef = pointer('paths', template, method, 'parameters', String(index), 'schema');
      const validate = this.validatorFor(schemaRef, this.requestAjv);
      if (!validate(this.parameterValue(schemaRef, values[0]))) return `${name}: ${describeErrors(validate.errors)}`;
    }
    const body = operation.requestBody as RequestBodyObject | undefined;
    if (!body) return undefined;
    if (request.body === undefined) return body.required ? 'the body is missing' : undefined;
    const contentType = request.headers.get('content-type') ?? '';
    if (!/^application\/json\s*(;\s*charset=utf-8\s*)?$/i.test(contentType)) return `content-type is "${contentType}"`;
    let parsed: unknown;
    try {
      const text =
        typeof request.body === 'string'
          ? request.body
          : new TextDecoder('utf-8', { fatal: true }).decode(request.body);
      parsed = JSON.parse(text);
    } catch {
      return 'the body is not JSON in UTF-8';
    }
    const bodyRef = pointer('paths', template, method, 'requestBody', 'content', 'application/json', 'schema');
    const validate = this.validatorFor(bodyRef, this.requestAjv);
    return validate(parsed) ? undefined : `the body: ${describeErrors(validate.errors)}`;
  }

  /** A header, path or query value as its schema's type reads it. */
  private parameterValue(schemaRef: string, text: string): unknown {
    const schema = this.validatorFor(schemaRef).schema as SchemaObject;
    return schema.type === 'integer' && CANONICAL_INTEGER.test(text) ? Number(text) : text;
  }

  private findOperation(verb: string, pathname: string): Found | undefined {
    if (!pathname.startsWith(`${this.basePath}/`)) return undefined;
    const relative = pathname.slice(this.basePath.length);
    const route = this.routes.find((candidate) => candidate.pattern.test(relative));
    // Fastify answers HEAD with the GET route's headers and no body.
    const method = verb === 'HEAD' && !route?.operations.head ? 'get' : verb.toLowerCase();
    const operation = route?.operations[method];
    return route && operation ? { template: route.template, method, operation } : undefined;
  }

  private validatorFor(schemaRef: string, ajv = this.ajv): ValidateFunction {
    return ajv.getSchema(schemaRef) ?? ajv.compile({ $id: schemaRef, $ref: schemaRef });
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

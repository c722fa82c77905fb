import type { Ajv } from 'ajv';
import { maxHeaderSize } from 'node:http';
import type { OpenAPIObject } from '@nestjs/swagger';
import { NAME_UNICODE_RULE } from '../../src/pets/dto/is-pet-name.decorator.js';

/**
 * Rules the document states in words only, because JSON Schema has no portable form for them, keyed by the
 * schema whose description states them (dev/build-openapi-document.spec.ts checks that it does). A request the
 * schemas accept may be refused for one of these, and for no other reason.
 */
export const STATED_RULES: Readonly<Record<string, (value: unknown) => boolean>> = {
  '/components/schemas/NewPet/properties/name': (value) => typeof value !== 'string' || NAME_UNICODE_RULE.test(value),
};

/** The keyword a schema carries, in the tests' copy of the document, when a rule in words qualifies it. */
export const STATED_RULE = 'x-stated-rule';

/** A copy of the document with each stated rule's schema marked by STATED_RULE (its key in STATED_RULES). */
export function markStatedRules(document: OpenAPIObject): OpenAPIObject {
  const copy = structuredClone(document);
  for (const pointer of Object.keys(STATED_RULES)) {
    let schema = copy as unknown as Record<string, unknown> | undefined;
    for (const segment of pointer.slice(1).split('/')) {
      schema = schema?.[segment.replace(/~1/g, '/').replace(/~0/g, '~')] as Record<string, unknown> | undefined;
    }
    if (!schema) throw new Error(`The document has no schema at ${pointer}, where a rule in words was expected`);
    schema[STATED_RULE] = pointer;
  }
  return copy;
}

/** Teaches an Ajv the STATED_RULE keyword. */
export function addStatedRuleKeyword(ajv: Ajv): void {
  ajv.addKeyword({
    keyword: STATED_RULE,
    schemaType: 'string',
    validate: (pointer: string, data: unknown) => STATED_RULES[pointer](data),
  });
}

/** What fetch adds to the request line and headers a test sets (host, connection, user-agent, accept...), at most. */
const FETCH_HEAD_BYTES = 512;

/**
 * Whether the request line and headers may exceed the limit the document's description states (Node's
 * maxHeaderSize), counting what the test set plus what fetch adds.
 */
export function headBeyondStatedLimit(url: URL, headers: Headers): boolean {
  let bytes = Buffer.byteLength(`${url.pathname}${url.search}`) + FETCH_HEAD_BYTES;
  headers.forEach((value, name) => (bytes += Buffer.byteLength(`${name}: ${value}\r\n`)));
  return bytes >= maxHeaderSize;
}

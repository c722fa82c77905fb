import type { IncomingMessage } from 'node:http';
import { assignRequestId } from './request-id.js';

const rawRequest = (requestId?: string) =>
  ({ headers: requestId === undefined ? {} : { 'x-request-id': requestId } }) as IncomingMessage;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('assignRequestId', () => {
  it("keeps the client's id when it is sane, and leaves it on the raw request", () => {
    const raw = rawRequest('client-42.retry:1');
    expect(assignRequestId(raw)).toBe('client-42.retry:1');
    expect(raw.id).toBe('client-42.retry:1');
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['too long', 'a'.repeat(129)],
    ['with spaces', 'two words'],
    ['with quotes', 'x"y'],
    ['with control characters', 'line\nbreak'],
  ])('generates a UUID when the offered id is %s', (_case, offered) => {
    expect(assignRequestId(rawRequest(offered))).toMatch(UUID);
  });

  it('generates a different id for each request', () => {
    expect(assignRequestId(rawRequest())).not.toBe(assignRequestId(rawRequest()));
  });
});

import { expect, jest } from '@jest/globals';
import { CallHandler, ExecutionContext, Logger } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Registry } from 'prom-client';
import { firstValueFrom, of } from 'rxjs';
import {
  DEPRECATION_LOG_INTERVAL_MS,
  DEPRECATION_POLICY,
  DeprecationInterceptor,
  deprecationHeaders,
} from './deprecated.decorator.js';

const KEY = 'raw-secret-key-0123456789';

// The shape of getPet's policy in the pets controller: shared code is tested without importing a feature.
const POLICY = {
  operationId: 'getPet',
  since: new Date('2026-11-20T00:00:00Z'),
  sunset: new Date('2030-12-05T00:00:00Z'),
  successor: '/v1/pets',
  advice: 'Use `GET /pets` with the `status` filter instead.',
};

function getPet() {}
Reflect.defineMetadata(DEPRECATION_POLICY, POLICY, getPet);

function context(handler: () => void, user?: { id: string; name: string }) {
  const sent: Record<string, string> = {};
  const reply = { headers: (values: Record<string, string>) => Object.assign(sent, values) };
  const request = {
    method: 'GET',
    routeOptions: { url: '/v1/pets/:petId' },
    headers: { authorization: `Bearer ${KEY}` },
    user,
  };
  const executionContext = {
    getHandler: () => handler,
    getClass: () => Object,
    switchToHttp: () => ({ getRequest: () => request, getResponse: () => reply }),
  } as unknown as ExecutionContext;
  return { executionContext, sent };
}

const handlerReturning = (value: unknown): CallHandler => ({ handle: () => of(value) });

describe('deprecationHeaders', () => {
  it('formats a policy as RFC 9745, RFC 8594 and successor-version headers', () => {
    expect(deprecationHeaders(POLICY)).toEqual({
      Deprecation: '@1795132800',
      Sunset: 'Thu, 05 Dec 2030 00:00:00 GMT',
      Link: '</v1/pets>; rel="successor-version"',
    });
  });
});

/** Nest's Logger, its warn lines pushed into `warned` with the logger's context. */
function warnInto(warned: { context: string; fields: object; message: string }[]) {
  return jest.spyOn(Logger.prototype, 'warn').mockImplementation(function (this: Logger, fields, message) {
    const { context } = this as unknown as { context: string };
    warned.push({ context, fields: fields as object, message: message as string });
  });
}

describe('DeprecationInterceptor', () => {
  let warned: { context: string; fields: object; message: string }[];
  let registry: Registry;
  let interceptor: DeprecationInterceptor;
  const deprecatedCalls = async () =>
    (await registry.getSingleMetric('animal_store_deprecated_calls_total')!.get()).values.map(({ labels, value }) => ({
      labels,
      value,
    }));

  beforeEach(() => {
    warned = [];
    registry = new Registry();
    warnInto(warned);
    interceptor = new DeprecationInterceptor(new Reflector(), registry);
  });

  afterEach(() => jest.restoreAllMocks());

  it('sets the three headers and passes the handler’s result through', async () => {
    const { executionContext, sent } = context(getPet, { id: 'env-1', name: 'API_KEYS #1' });

    const result = await firstValueFrom(interceptor.intercept(executionContext, handlerReturning({ id: 1 })));

    expect(result).toEqual({ id: 1 });
    expect(sent).toEqual({
      Deprecation: '@1795132800',
      Sunset: 'Thu, 05 Dec 2030 00:00:00 GMT',
      Link: '</v1/pets>; rel="successor-version"',
    });
  });

  it('sets the headers before the handler runs, so error responses carry them too', () => {
    const { executionContext, sent } = context(getPet);
    const failing: CallHandler = {
      handle: () => {
        throw new Error('not found');
      },
    };

    expect(() => interceptor.intercept(executionContext, failing)).toThrow('not found');
    expect(sent.Deprecation).toBe('@1795132800');
  });

  it('counts every call and logs each key’s first call per interval at warn level with the key id, never the key', async () => {
    const { executionContext } = context(getPet, { id: 'env-1', name: 'API_KEYS #1' });
    const other = context(getPet, { id: '7', name: 'Acme' }).executionContext;

    await firstValueFrom(interceptor.intercept(executionContext, handlerReturning(null)));
    await firstValueFrom(interceptor.intercept(executionContext, handlerReturning(null)));
    await firstValueFrom(interceptor.intercept(other, handlerReturning(null)));

    expect(warned).toEqual([
      {
        context: 'Deprecation',
        fields: expect.objectContaining({ operation: 'getPet', keyId: 'env-1' }),
        message: expect.stringMatching(
          /^Deprecated operation getPet called by API key env-1 \(logged once per key every 10 minutes/,
        ),
      },
      {
        context: 'Deprecation',
        fields: expect.objectContaining({ operation: 'getPet', keyId: '7' }),
        message: expect.stringMatching(/^Deprecated operation getPet called by API key 7 /),
      },
    ]);
    expect(JSON.stringify(warned)).not.toContain(KEY);
    expect(await deprecatedCalls()).toEqual([{ labels: { operation: 'getPet' }, value: 3 }]);
  });

  it('logs a key again once DEPRECATION_LOG_INTERVAL_MS has passed since its last line, not before', async () => {
    const { executionContext } = context(getPet, { id: 'env-1', name: 'API_KEYS #1' });
    const start = Date.parse('2027-01-01T00:00:00Z');
    const clock = jest.spyOn(Date, 'now');
    try {
      for (const at of [0, DEPRECATION_LOG_INTERVAL_MS - 1, DEPRECATION_LOG_INTERVAL_MS]) {
        clock.mockReturnValue(start + at);
        await firstValueFrom(interceptor.intercept(executionContext, handlerReturning(null)));
      }
    } finally {
      clock.mockRestore();
    }

    expect(warned.map((line) => line.fields)).toEqual([
      expect.objectContaining({ keyId: 'env-1' }),
      expect.objectContaining({ keyId: 'env-1' }),
    ]);
    expect(await deprecatedCalls()).toEqual([{ labels: { operation: 'getPet' }, value: 3 }]);
  });

  it('says "unknown" when no identity is attached', async () => {
    const { executionContext } = context(getPet);

    await firstValueFrom(interceptor.intercept(executionContext, handlerReturning(null)));

    expect(warned).toEqual([
      {
        context: 'Deprecation',
        fields: expect.objectContaining({ keyId: 'unknown' }),
        message: expect.stringMatching(/^Deprecated operation getPet called by API key unknown /),
      },
    ]);
  });

  it('sets no headers on a handler without a policy', async () => {
    function undecorated() {}
    const { executionContext, sent } = context(undecorated);

    await firstValueFrom(interceptor.intercept(executionContext, handlerReturning(null)));

    expect(sent).toEqual({});
  });
});

import { jest } from '@jest/globals';
import { ExecutionContext, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiError } from '../edge/errors/api-error.js';
import { defaultConfig } from '../../test/support/config.js';
import { AuthFailureLimiter, Refusal } from './rate-limit/auth-failure-limiter.js';
import { MemoryRateLimitStorage } from './rate-limit/memory-rate-limit-storage.js';
import { ApiKeyIdentity, ApiKeyRefusalReason, ApiKeyVerdict, InvalidKeyReason } from './api-key-identity.js';
import type { ApiKeyRefusals } from './api-key-refusals.js';
import { type ApiKeyScope, REQUIRED_SCOPE } from './api-key-scope.js';
import { ApiKeyStore } from './api-key-store.js';
import { ApiKeyGuard } from './api-key.guard.js';
import { BearerStrategy } from './bearer.strategy.js';
import { keyRefused } from './key-refused.error.js';
import { IS_PUBLIC, Public } from './public.decorator.js';

const VALID_KEY = 'valid-key-0123456789abcdef';
const READ_KEY = 'read-key-0123456789abcdef';
const IDENTITY: ApiKeyIdentity = { id: 'env-0123abcd', name: 'API_KEYS #1', scopes: null, lineage: 'env-0123abcd' };
const STOREFRONT: ApiKeyIdentity = { id: '12', name: 'storefront', scopes: ['pets:read'], lineage: '12' };
const VERDICTS: Record<string, ApiKeyVerdict> = {
  [VALID_KEY]: IDENTITY,
  [READ_KEY]: STOREFRONT,
  'revoked-key-0123456789abcdef': 'revoked',
  'expired-key-0123456789abcdef': 'expired',
};

/** The store with its answers from VERDICTS: both of its methods are replaced, so it holds no key sources. */
class FakeApiKeyStore extends ApiKeyStore {
  readonly presented: string[] = [];
  constructor() {
    super({ apiKeys: [] } as never, null as never, null as never, null as never);
  }
  verify(key: string): Promise<ApiKeyVerdict> {
    this.presented.push(key);
    return Promise.resolve(VERDICTS[key] ?? 'unknown');
  }
  /** Whether each key asked about past the budget could be looked up. */
  readonly askedPastBudget: boolean[] = [];
  /** Like the real store: it answers the keys it holds, and unknown ones only when it may look them up. */
  refusalIfKnown(key: string, mayLookUp: boolean): Promise<InvalidKeyReason | null | undefined> {
    this.askedPastBudget.push(mayLookUp);
    const verdict = VERDICTS[key] ?? (mayLookUp ? 'unknown' : undefined);
    return Promise.resolve(typeof verdict === 'object' ? null : verdict);
  }
}

interface FakeRequest {
  ip?: string;
  headers: Record<string, string>;
  query?: unknown;
  body?: unknown;
  user?: ApiKeyIdentity;
}

type Marking = 'public handler' | 'public controller' | 'explicitly not public';

function contextFor(request: FakeRequest, marking?: Marking, scope?: ApiKeyScope) {
  const handler = () => undefined;
  class Controller {}
  if (scope) SetMetadata(REQUIRED_SCOPE, scope)(handler, 'handler', { value: handler });
  if (marking === 'public handler') Public()(handler);
  if (marking === 'public controller') Public()(Controller);
  if (marking === 'explicitly not public') Reflect.defineMetadata(IS_PUBLIC, false, handler);
  return {
    getHandler: () => handler,
    getClass: () => Controller,
    switchToHttp: () => ({ getRequest: () => request, getResponse: () => ({}) }),
  } as unknown as ExecutionContext;
}

async function rejection(promise: Promise<unknown>) {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ApiError);
  const apiError = error as ApiError;
  return { body: apiError.toBody(), headers: apiError.headers };
}

const MISSING = {
  body: {
    code: 'unauthorized',
    message: 'An API key is required: send Authorization: Bearer <key>.',
    status: 401,
  },
  headers: { 'WWW-Authenticate': 'Bearer realm="animal-store"' },
};

const INVALID = {
  body: { code: 'unauthorized', message: 'The API key is not valid.', status: 401 },
  headers: { 'WWW-Authenticate': 'Bearer realm="animal-store", error="invalid_token"' },
};

const MALFORMED = {
  body: {
    code: 'unauthorized',
    message: 'The Authorization header is malformed: use Bearer <key>.',
    status: 401,
  },
  headers: { 'WWW-Authenticate': 'Bearer realm="animal-store", error="invalid_request"' },
};

const EXPIRED = {
  body: {
    code: 'unauthorized',
    message: 'The API key has expired: use the key that replaced it, or ask for a new one.',
    status: 401,
  },
  headers: INVALID.headers,
};

describe('ApiKeyGuard', () => {
  let store: FakeApiKeyStore;
  let guard: ApiKeyGuard;
  let failures: string[];
  let refused: ApiKeyRefusalReason[];
  const refusals = () =>
    ({ count: (reason: ApiKeyRefusalReason) => refused.push(reason) }) as unknown as ApiKeyRefusals;

  beforeEach(() => {
    store = new FakeApiKeyStore();
    failures = [];
    refused = [];
    // Rate limiting has specs of its own; here it is off, and failed attempts are only recorded.
    const authFailures = {
      decide: async (ip: string, judge: (lookupsLeft: null) => Promise<unknown>) => {
        const verdict = await judge(null);
        if (!(verdict instanceof Refusal)) return verdict;
        failures.push(ip);
        throw verdict.error;
      },
    } as unknown as AuthFailureLimiter;
    // Registers the "bearer" strategy with passport, backed by the fake store.
    new BearerStrategy(store, authFailures, refusals());
    guard = new ApiKeyGuard(new Reflector(), refusals());
  });

  describe('the failed-authentication budget', () => {
    const BUDGET = 3;
    const from = (ip: string, authorization?: string) =>
      contextFor({ ip, headers: authorization === undefined ? {} : { authorization } });
    let limited: ApiKeyGuard;
    beforeEach(() => {
      const limiter = new AuthFailureLimiter(new MemoryRateLimitStorage(), {
        ...defaultConfig(),
        authFailureLimitPerMinute: BUDGET,
      });
      new BearerStrategy(store, limiter, refusals());
      limited = new ApiKeyGuard(new Reflector(), refusals());
    });
    const statusOf = (promise: Promise<unknown>) =>
      promise.then(
        () => 200,
        (error: ApiError) => error.getStatus(),
      );

    it('past it, refuses wrong keys with 429 and serves a valid key from the same address', async () => {
      for (let i = 0; i < BUDGET; i += 1) {
        expect(await statusOf(limited.canActivate(from('203.0.113.7', `Bearer wrong-key-${i}-0123456789`)))).toBe(401);
      }
      expect(await statusOf(limited.canActivate(from('203.0.113.7', 'Bearer wrong-key-x-0123456789')))).toBe(429);
      const lookups = store.presented.length;
      expect(await statusOf(limited.canActivate(from('203.0.113.7', 'Bearer wrong-key-y-0123456789')))).toBe(429);
      expect(store.presented).toHaveLength(lookups);

      expect(await statusOf(limited.canActivate(from('203.0.113.7', `Bearer ${VALID_KEY}`)))).toBe(200);
      expect(await statusOf(limited.canActivate(from('203.0.113.8', 'Bearer wrong-key-z-0123456789')))).toBe(401);
      expect(refused).toEqual(Array.from({ length: BUDGET + 3 }, () => 'unknown'));
    });

    it('answers an expired key 401 with its reason, under and past the budget', async () => {
      const key = 'Bearer expired-key-0123456789abcdef';
      for (let i = 0; i < BUDGET + 2; i += 1) {
        expect(await statusOf(limited.canActivate(from('203.0.113.5', key)))).toBe(401);
      }
      // Its refusals count against the address like any other: a wrong key from it is now 429.
      expect(await statusOf(limited.canActivate(from('203.0.113.5', 'Bearer wrong-key-0123456789')))).toBe(429);
      const lookups = store.presented.length;
      await expect(rejection(limited.canActivate(from('203.0.113.5', key)))).resolves.toEqual(EXPIRED);
      expect(store.presented).toHaveLength(lookups);
      expect(refused).toEqual([...Array.from({ length: BUDGET + 2 }, () => 'expired'), 'unknown', 'expired']);
    });

    it('answers a revoked key as an unknown one, 401 then 429 past the budget, and counts it as revoked', async () => {
      const key = 'Bearer revoked-key-0123456789abcdef';
      for (let i = 0; i < BUDGET; i += 1) {
        await expect(rejection(limited.canActivate(from('203.0.113.6', key)))).resolves.toEqual(INVALID);
      }
      expect(await statusOf(limited.canActivate(from('203.0.113.6', key)))).toBe(429);
      expect(await statusOf(limited.canActivate(from('203.0.113.6', key)))).toBe(429);
      expect(refused).toEqual(Array.from({ length: BUDGET + 2 }, () => 'revoked'));
    });

    it('past it, looks up as many refused keys again as the budget, then answers the rest as unknown', async () => {
      for (let i = 0; i <= BUDGET; i += 1) await statusOf(limited.canActivate(from('203.0.113.4', `Bearer w-${i}`)));
      store.askedPastBudget.length = 0;
      for (let i = 0; i <= BUDGET; i += 1) {
        expect(await statusOf(limited.canActivate(from('203.0.113.4', `Bearer wrong-key-${i}-0123456789`)))).toBe(429);
      }
      expect(store.askedPastBudget).toEqual([...Array.from({ length: BUDGET }, () => true), false]);
      // A key the store knows is still answered as it is.
      expect(await statusOf(limited.canActivate(from('203.0.113.4', `Bearer ${VALID_KEY}`)))).toBe(200);
    });

    it('does not count requests without credentials, nor malformed ones: no lookup, no storage round trip', async () => {
      for (let i = 0; i < BUDGET * 3; i += 1) {
        expect(await statusOf(limited.canActivate(from('203.0.113.9')))).toBe(401);
        expect(await statusOf(limited.canActivate(from('203.0.113.9', 'Bearer two words')))).toBe(401);
      }
      expect(await statusOf(limited.canActivate(from('203.0.113.9', 'Bearer wrong-key-0123456789')))).toBe(401);
      expect(store.presented).toEqual(['wrong-key-0123456789']);
    });

    it('counts an IPv6 client by its /64: rotating addresses inside it gains nothing', async () => {
      for (let i = 0; i < BUDGET; i += 1) {
        const address = `2001:db8:0:1::${i + 1}`;
        expect(await statusOf(limited.canActivate(from(address, `Bearer wrong-key-${i}-0123456789`)))).toBe(401);
      }
      expect(await statusOf(limited.canActivate(from('2001:db8:0:1:ffff::9', 'Bearer wrong-key-0123456789')))).toBe(
        429,
      );
      expect(await statusOf(limited.canActivate(from('2001:db8:0:2::1', 'Bearer wrong-key-0123456789')))).toBe(401);
    });
  });

  describe('@Public routes', () => {
    it.each([['public handler' as const], ['public controller' as const]])(
      'lets a request without a key through on a %s without consulting the store',
      async (marking) => {
        await expect(guard.canActivate(contextFor({ headers: {} }, marking))).resolves.toBe(true);
        expect(store.presented).toEqual([]);
      },
    );

    it('still protects a route whose metadata says it is not public', async () => {
      await expect(rejection(guard.canActivate(contextFor({ headers: {} }, 'explicitly not public')))).resolves.toEqual(
        MISSING,
      );
    });
  });

  describe('protected routes', () => {
    it('accepts a valid bearer key and attaches its identity as request.user', async () => {
      const request: FakeRequest = { headers: { authorization: `Bearer ${VALID_KEY}` } };

      await expect(guard.canActivate(contextFor(request))).resolves.toBe(true);
      expect(request.user).toEqual(IDENTITY);
      expect(store.presented).toEqual([VALID_KEY]);
    });

    it('matches the scheme case-insensitively', async () => {
      await expect(guard.canActivate(contextFor({ headers: { authorization: `bearer ${VALID_KEY}` } }))).resolves.toBe(
        true,
      );
    });

    it.each([
      ['no Authorization header', {}],
      ['the Basic scheme', { authorization: 'Basic dXNlcjpwYXNz' }],
    ])('answers %s with 401 and the bare challenge', async (_case, headers) => {
      await expect(rejection(guard.canActivate(contextFor({ headers })))).resolves.toEqual(MISSING);
    });

    it('answers a wrong key with 401 and error="invalid_token"', async () => {
      const context = contextFor({
        ip: '198.51.100.1',
        headers: { authorization: 'Bearer wrong-key-0123456789abcdef' },
      });

      await expect(rejection(guard.canActivate(context))).resolves.toEqual(INVALID);
      expect(refused).toEqual(['unknown']);
      expect(failures).toEqual(['198.51.100.1']);
    });

    it('answers a revoked key as a wrong one, and counts it as revoked', async () => {
      const context = contextFor({
        ip: '198.51.100.2',
        headers: { authorization: 'Bearer revoked-key-0123456789abcdef' },
      });

      await expect(rejection(guard.canActivate(context))).resolves.toEqual(INVALID);
      expect(refused).toEqual(['revoked']);
      expect(failures).toEqual(['198.51.100.2']);
    });

    it('answers an expired key with 401, error="invalid_token" and a message saying it expired', async () => {
      const context = contextFor({
        ip: '198.51.100.3',
        headers: { authorization: 'Bearer expired-key-0123456789abcdef' },
      });

      await expect(rejection(guard.canActivate(context))).resolves.toEqual(EXPIRED);
      expect(refused).toEqual(['expired']);
      expect(failures).toEqual(['198.51.100.3']);
    });

    it.each([['Bearer'], ['Bearer two words'], ['Bearer  double-space']])(
      'answers the malformed header %j with 401 and error="invalid_request"',
      async (authorization) => {
        const context = contextFor({ headers: { authorization } });

        await expect(rejection(guard.canActivate(context))).resolves.toEqual(MALFORMED);
      },
    );

    it.each([
      ['query string', { query: { access_token: VALID_KEY } }],
      ['body', { body: { access_token: VALID_KEY } }],
      ['query string, as an array', { query: { access_token: [VALID_KEY, VALID_KEY] } }],
      ['body, as an object', { body: { access_token: { key: VALID_KEY } } }],
    ])('ignores access_token in the %s', async (_case, extra) => {
      const context = contextFor({ headers: {}, ...extra });

      await expect(rejection(guard.canActivate(context))).resolves.toEqual(MISSING);
      expect(store.presented).toEqual([]);
    });

    it('uses only the header when access_token is also sent elsewhere', async () => {
      const request: FakeRequest = {
        headers: { authorization: `Bearer ${VALID_KEY}` },
        query: { access_token: 'other' },
        body: { access_token: 'other' },
      };

      await expect(guard.canActivate(contextFor(request))).resolves.toBe(true);
      expect(store.presented).toEqual([VALID_KEY]);
    });
  });

  describe('scopes', () => {
    const withKey = (key: string, scope?: ApiKeyScope) =>
      contextFor({ ip: '198.51.100.9', headers: { authorization: `Bearer ${key}` } }, undefined, scope);

    it("answers a key without the route's scope with 403 insufficient_scope and the scope in the challenge", async () => {
      await expect(rejection(guard.canActivate(withKey(READ_KEY, 'pets:write')))).resolves.toEqual({
        body: {
          code: 'insufficient_scope',
          message:
            'This operation needs the pets:write scope, which the API key does not have: use a key issued with pets:write.',
          status: 403,
        },
        headers: {
          'WWW-Authenticate': 'Bearer realm="animal-store", error="insufficient_scope", scope="pets:write"',
        },
      });
      expect(refused).toEqual(['insufficient_scope']);
      // The key is valid: nothing counts against its address.
      expect(failures).toEqual([]);
    });

    it('lets a key with the scope through, and an unscoped key through any scoped route', async () => {
      await expect(guard.canActivate(withKey(READ_KEY, 'pets:read'))).resolves.toBe(true);
      await expect(guard.canActivate(withKey(VALID_KEY, 'pets:write'))).resolves.toBe(true);
      await expect(guard.canActivate(withKey(READ_KEY))).resolves.toBe(true);
      expect(refused).toEqual([]);
    });

    it("reads a route's metadata once, whatever the number of requests", async () => {
      const reflector = new Reflector();
      const read = jest.spyOn(reflector, 'getAllAndOverride');
      const counted = new ApiKeyGuard(reflector, refusals());
      const context = withKey(READ_KEY, 'pets:read');
      for (let i = 0; i < 3; i += 1) await counted.canActivate(context);
      expect(read).toHaveBeenCalledTimes(2);
    });
  });

  describe('handleRequest', () => {
    const outcome = (call: () => unknown) => {
      try {
        call();
      } catch (error) {
        expect(error).toBeInstanceOf(ApiError);
        return { body: (error as ApiError).toBody(), headers: (error as ApiError).headers };
      }
      throw new Error('expected a throw');
    };

    it('returns the identity', () => {
      expect(guard.handleRequest(null, IDENTITY, undefined, contextFor({ headers: {} }))).toBe(IDENTITY);
    });

    it('rethrows a store failure as it is, for the filter to map', () => {
      const failure = new Error('database down');

      expect(() => guard.handleRequest(failure, false, undefined, contextFor({ headers: {} }))).toThrow(failure);
    });

    it('answers a failure without a status (no bearer key sent) with "An API key is required"', () => {
      const context = contextFor({ headers: {} });
      expect(outcome(() => guard.handleRequest(null, false, 'Bearer realm="animal-store"', context))).toEqual(MISSING);
    });

    it('rethrows a refused key as the strategy threw it', () => {
      const refusal = keyRefused('expired');

      expect(() => guard.handleRequest(refusal, false, undefined, contextFor({ headers: {} }))).toThrow(refusal);
    });

    it('answers the status 400 (the strategy found the header malformed) as malformed', () => {
      const context = contextFor({ headers: {} });
      expect(outcome(() => guard.handleRequest(null, false, undefined, context, 400))).toEqual(MALFORMED);
    });
  });
});

import { jest } from '@jest/globals';
import { ArgumentsHost, HttpException, Logger, NotFoundException, ServiceUnavailableException } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { errorCodes } from 'fastify';
import { ApiError } from './api-error.js';
import { ApiErrorFilter } from './api-error.filter.js';
import { ErrorCode } from './error-code.js';
import { faultCodeOf } from './fault-codes.js';

/** The routes the fake Fastify instance knows, as "METHOD path". */
const ROUTES = new Set(['GET /v1/pets', 'HEAD /v1/pets', 'POST /v1/pets', 'GET /v1/pets/1', 'HEAD /v1/pets/1']);

class FakeReply {
  readonly raw = {};
  readonly sent: Record<string, string> = {};
  headers(values: Record<string, string>) {
    Object.assign(this.sent, values);
    return this;
  }
}

function setUp() {
  const replied: { body: unknown; status: number }[] = [];
  const adapterHost = {
    httpAdapter: {
      reply: (_reply: unknown, body: unknown, status: number) => replied.push({ body, status }),
      getInstance: () => ({
        findRoute: ({ method, url }: { method: string; url: string }) => (ROUTES.has(`${method} ${url}`) ? {} : null),
      }),
    },
  } as unknown as HttpAdapterHost;
  const filter = new ApiErrorFilter(adapterHost);
  const reply = new FakeReply();
  const catchFor = (exception: unknown, method: string, url: string, raw: object) => {
    const request = { id: 'req-1', method, url, routeOptions: { url: '/v1/pets' }, raw };
    const host = {
      switchToHttp: () => ({ getRequest: () => request, getResponse: () => reply }),
    } as unknown as ArgumentsHost;
    filter.catch(exception, host);
  };
  const send = (exception: unknown, method = 'GET', url = '/v1/pets') => {
    catchFor(exception, method, url, { complete: true, destroyed: false });
    expect(replied).toHaveLength(1);
    return { ...replied[0], headers: reply.sent };
  };
  /** The connection closed while the body was still arriving. */
  const abandon = (exception: unknown) => {
    catchFor(exception, 'POST', '/v1/pets', { complete: false, destroyed: true, socket: {} });
    return replied;
  };
  return { send, abandon, reply };
}

describe('ApiErrorFilter', () => {
  let logged: jest.SpiedFunction<Logger['error']>;

  beforeEach(() => {
    logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
  });

  afterEach(() => logged.mockRestore());

  it('replies with the ApiError body, status and headers', () => {
    const { send } = setUp();

    const result = send(new ApiError(503, ErrorCode.ServiceUnavailable, 'Retry later.', { 'Retry-After': '5' }));

    expect(result.status).toBe(503);
    expect(result.body).toEqual({ code: 'service_unavailable', message: 'Retry later.', status: 503 });
    expect(result.headers).toEqual({ 'Retry-After': '5' });
  });

  it('maps Fastify errors wrapped by the adapter', () => {
    const { send } = setUp();
    const tooLarge = new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE();

    const result = send(new HttpException(tooLarge.message, 413, { cause: tooLarge }), 'POST');

    expect(result.status).toBe(413);
    expect(result.body).toEqual({
      code: 'payload_too_large',
      message: 'The request body is larger than 16 KiB.',
      status: 413,
    });
    expect(logged).not.toHaveBeenCalled();
  });

  describe('router 404s', () => {
    it('answers an unknown path with 404 without echoing it', () => {
      const { send } = setUp();

      const result = send(new NotFoundException('Cannot GET /v1/secret-path'), 'GET', '/v1/secret-path?x=1');

      expect(result.status).toBe(404);
      expect(result.body).toEqual({ code: 'not_found', message: 'No resource exists at this path.', status: 404 });
      expect(result.headers).toEqual({});
    });

    it.each([
      ['DELETE', '/v1/pets', 'GET, HEAD, POST'],
      ['PUT', '/v1/pets?limit=5', 'GET, HEAD, POST'],
      ['POST', '/v1/pets/1', 'GET, HEAD'],
    ])('answers %s %s, a known path, with 405 and Allow: %s', (method, url, allow) => {
      const { send } = setUp();

      const result = send(new NotFoundException(`Cannot ${method} ${url}`), method, url);

      expect(result.status).toBe(405);
      expect(result.body).toEqual({
        code: 'method_not_allowed',
        message: `${method} is not allowed on this path.`,
        status: 405,
      });
      expect(result.headers).toEqual({ Allow: allow });
    });

    it('answers 404, not a 405 contradicting its own Allow, when the method is one the path has', () => {
      const { send } = setUp();

      const result = send(new NotFoundException('Cannot GET /v1/pets/1'), 'GET', '/v1/pets/1');

      expect(result.status).toBe(404);
      expect(result.body).toEqual({ code: 'not_found', message: 'No resource exists at this path.', status: 404 });
      expect(result.headers).toEqual({});
    });

    it('keeps a 404 the application raised itself, even on a known path', () => {
      const { send } = setUp();

      const result = send(new ApiError(404, ErrorCode.NotFound, 'No animal has id 1.'), 'GET', '/v1/pets/1');

      expect(result.status).toBe(404);
      expect(result.body).toEqual({ code: 'not_found', message: 'No animal has id 1.', status: 404 });
    });
  });

  describe('5xx', () => {
    it('logs the error with the request and answers with the generic body only', () => {
      const { send, reply } = setUp();
      const bug = new Error('relation "pets" does not exist: SELECT id FROM pets');

      const result = send(bug, 'POST');

      expect(result.status).toBe(500);
      expect(result.body).toEqual({ code: 'internal_error', message: 'Internal server error.', status: 500 });
      expect(JSON.stringify(result.body)).not.toMatch(/SELECT|relation|stack|at /);
      expect(logged).toHaveBeenCalledTimes(1);
      expect(logged).toHaveBeenCalledWith(
        { err: bug, reqId: 'req-1', method: 'POST', route: '/v1/pets' },
        'POST /v1/pets failed with 500',
      );
      // For the request's SERVER span.
      expect(faultCodeOf(reply.raw)).toBe('internal_error');
    });

    it('answers a database fault 503 with Retry-After and logs nothing (Database recorded it where it happened)', () => {
      const { send } = setUp();

      const result = send(
        Object.assign(new Error('cannot execute INSERT in a read-only transaction'), { code: '25006' }),
      );

      expect(result.status).toBe(503);
      expect(result.headers).toEqual({ 'Retry-After': '5' });
      expect(JSON.stringify(result.body)).not.toMatch(/INSERT|read-only/);
      expect(logged).not.toHaveBeenCalled();
    });

    it('does not log a 503 thrown on purpose by code that reports it itself (readiness, on every probe)', () => {
      const { send } = setUp();

      const result = send(
        new ApiError(503, ErrorCode.ServiceUnavailable, 'The service is temporarily unavailable; retry later.'),
      );

      expect(result.status).toBe(503);
      expect(logged).not.toHaveBeenCalled();
    });

    it("does not log terminus's 503 for a failing readiness round (ReadinessLog reports it once), and answers the Error body", () => {
      const { send } = setUp();

      const result = send(
        new ServiceUnavailableException({ status: 'error', error: { database: { status: 'down' } } }),
      );

      expect(result.status).toBe(503);
      expect(result.headers).toEqual({ 'Retry-After': '5' });
      expect(result.body).toEqual({
        code: 'service_unavailable',
        message: 'The service is temporarily unavailable; retry later.',
        status: 503,
      });
      expect(logged).not.toHaveBeenCalled();
    });

    it('answers nothing, logs no error and no stack when the client hung up mid-body (not a 503)', () => {
      const { abandon } = setUp();
      const info = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
      try {
        const replied = abandon(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));

        expect(replied).toEqual([]);
        expect(logged).not.toHaveBeenCalled();
        expect(info).toHaveBeenCalledWith(
          { reqId: 'req-1', method: 'POST', route: '/v1/pets', status: 499 },
          'request abandoned: the client closed the connection before sending the whole body',
        );
      } finally {
        info.mockRestore();
      }
    });

    it('does not log client errors', () => {
      const { send } = setUp();

      send(new ApiError(400, ErrorCode.ValidationFailed, 'limit must be an integer from 1 to 100.'));

      expect(logged).not.toHaveBeenCalled();
    });
  });
});

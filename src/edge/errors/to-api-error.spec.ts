import {
  BadRequestException,
  HttpException,
  InternalServerErrorException,
  NotFoundException,
  ServiceUnavailableException,
  UnauthorizedException,
} from '@nestjs/common';
import { errorCodes } from 'fastify';
import { QueryFailedError, QueryRunnerAlreadyReleasedError, QueryRunnerProviderAlreadyReleasedError } from 'typeorm';
import { ApiError } from './api-error.js';
import { ErrorCode } from './error-code.js';
import { databaseFault } from '../../database/database-faults.js';
import { toApiError } from './to-api-error.js';

/** What Nest's Fastify adapter hands the filter for a Fastify 4xx error: an HttpException with the original as cause. */
const wrapped = (error: Error & { statusCode?: number }) =>
  new HttpException(error.message, error.statusCode ?? 500, { cause: error });

const errorWithCode = (code: string, message = 'boom') => Object.assign(new Error(message), { code });

const INTERNAL = { code: 'internal_error', message: 'Internal server error.', status: 500 };
const UNAVAILABLE = {
  code: 'service_unavailable',
  message: 'The service is temporarily unavailable; retry later.',
  status: 503,
};

describe('toApiError', () => {
  it('returns an ApiError unchanged', () => {
    const error = new ApiError(404, ErrorCode.NotFound, 'No animal has id 3.');

    expect(toApiError(error)).toBe(error);
  });

  describe('Fastify errors, wrapped by the adapter or raw (framework errors)', () => {
    it.each([
      [
        'FST_ERR_CTP_INVALID_JSON_BODY',
        new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY(),
        400,
        'invalid_json',
        'The request body is not valid JSON.',
      ],
      [
        'FST_ERR_CTP_EMPTY_JSON_BODY',
        new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY(),
        400,
        'invalid_json',
        'The request body is empty.',
      ],
      [
        'FST_ERR_CTP_INVALID_CONTENT_LENGTH',
        new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH(),
        400,
        'invalid_json',
        'The request body does not match its Content-Length.',
      ],
      [
        'FST_ERR_CTP_BODY_TOO_LARGE',
        new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE(),
        413,
        'payload_too_large',
        'The request body is larger than 16 KiB.',
      ],
      [
        'FST_ERR_CTP_INVALID_MEDIA_TYPE',
        new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE(),
        415,
        'unsupported_media_type',
        'The request body must be application/json.',
      ],
      [
        'FST_ERR_BAD_URL',
        new errorCodes.FST_ERR_BAD_URL('/v1/pets/%E0%A4%A'),
        400,
        'validation_failed',
        'The request URL is malformed.',
      ],
      [
        'FST_ERR_MAX_PARAM_LENGTH',
        new errorCodes.FST_ERR_MAX_PARAM_LENGTH('/v1/pets/1111'),
        400,
        'validation_failed',
        'A path parameter is longer than allowed.',
      ],
    ])('maps %s', (_code, fastifyError, status, code, message) => {
      const expected = { code, message, status };

      expect(toApiError(wrapped(fastifyError)).toBody()).toEqual(expected);
      expect(toApiError(fastifyError).toBody()).toEqual(expected);
      expect(toApiError(fastifyError).headers).toEqual({});
    });

    it('never echoes the URL of a malformed request', () => {
      const body = toApiError(new errorCodes.FST_ERR_BAD_URL('/v1/pets/%E0%A4%A')).toBody();

      expect(JSON.stringify(body)).not.toContain('%E0');
    });

    it('answers an unmapped 5xx Fastify error with the generic 500', () => {
      expect(toApiError(new errorCodes.FST_ERR_HANDLER_TIMEOUT(1000, '/v1/pets')).toBody()).toEqual(INTERNAL);
    });
  });

  describe('HttpExceptions', () => {
    it.each([
      [new BadRequestException('name is required'), 400, 'validation_failed'],
      [new UnauthorizedException('no key'), 401, 'unauthorized'],
      [new NotFoundException('gone'), 404, 'not_found'],
      [new HttpException('wrong method', 405), 405, 'method_not_allowed'],
      [new HttpException('too big', 413), 413, 'payload_too_large'],
      [new HttpException('not json', 415), 415, 'unsupported_media_type'],
      [new HttpException('slow down', 429), 429, 'rate_limited'],
    ])('keeps the status and message of %p', (exception, status, code) => {
      expect(toApiError(exception).toBody()).toEqual({ code, message: exception.message, status });
    });

    // A path such as /docs/../package.json made @fastify/static answer 403, which no table documents.
    it.each([[403], [418], [451]])('answers a %i, which no table documents, with 400 validation_failed', (status) => {
      expect(toApiError(new HttpException('Forbidden', status)).toBody()).toEqual({
        code: 'validation_failed',
        message: 'The request was refused.',
        status: 400,
      });
    });

    it('answers a 503 with Retry-After', () => {
      const error = toApiError(new ServiceUnavailableException('database down'));

      expect(error.toBody()).toEqual(UNAVAILABLE);
      expect(error.headers).toEqual({ 'Retry-After': '5' });
    });

    it.each([[new InternalServerErrorException('SELECT secret FROM keys')], [new HttpException('bad gateway', 502)]])(
      'hides the message of a 5xx (%p) behind the generic 500',
      (exception) => {
        expect(toApiError(exception).toBody()).toEqual(INTERNAL);
      },
    );
  });

  describe('database faults (src/database/database-faults.ts)', () => {
    const query = 'SELECT id FROM pets';

    it.each([
      ['a refused connection', errorWithCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
      ['a reset socket', errorWithCode('ECONNRESET')],
      ['an unreachable host', errorWithCode('EHOSTUNREACH')],
      ['a temporary DNS failure', errorWithCode('EAI_AGAIN', 'getaddrinfo EAI_AGAIN db')],
      ['an unreachable network', errorWithCode('ENETUNREACH')],
      ['no local address to connect from', errorWithCode('EADDRNOTAVAIL')],
      ['a connection aborted', errorWithCode('ECONNABORTED')],
      ['an unknown host', errorWithCode('ENOTFOUND')],
      ['a socket timeout', errorWithCode('ETIMEDOUT')],
      ['a broken pipe', errorWithCode('EPIPE')],
      ['a pool timeout', new Error('timeout exceeded when trying to connect')],
      ['a dropped connection', new Error('Connection terminated unexpectedly')],
      ["a transaction's next statement after its connection dropped", new QueryRunnerProviderAlreadyReleasedError()],
      ["a transaction's COMMIT after its connection dropped", new QueryRunnerAlreadyReleasedError()],
      ['a server starting up', new Error('the database system is starting up')],
      ['a class 08 connection exception', new QueryFailedError(query, [], errorWithCode('08006'))],
      ['an admin shutdown (57P01)', new QueryFailedError(query, [], errorWithCode('57P01'))],
      ['a crash shutdown (57P02)', new QueryFailedError(query, [], errorWithCode('57P02'))],
      ['a server starting up (57P03)', new QueryFailedError(query, [], errorWithCode('57P03'))],
      ['a statement timeout (57014)', new QueryFailedError(query, [], errorWithCode('57014'))],
      ['a full disk (53100)', new QueryFailedError(query, [], errorWithCode('53100', 'could not extend file'))],
      ['an out-of-memory server (53200)', new QueryFailedError(query, [], errorWithCode('53200', 'out of memory'))],
      ['too many connections (53300)', errorWithCode('53300', 'sorry, too many clients already')],
      ['a read-only transaction (25006)', new QueryFailedError(query, [], errorWithCode('25006', 'read-only'))],
      ['a serialization failure (40001)', new QueryFailedError(query, [], errorWithCode('40001'))],
      ['a deadlock (40P01)', new QueryFailedError(query, [], errorWithCode('40P01', 'deadlock detected'))],
    ])('answers %s with 503 and Retry-After', (_case, exception) => {
      expect(databaseFault(exception)).not.toBeNull();
      const error = toApiError(exception);
      expect(error.toBody()).toEqual(UNAVAILABLE);
      expect(error.headers).toEqual({ 'Retry-After': '5' });
    });

    it.each([
      ['a unique violation', new QueryFailedError(query, [], errorWithCode('23505', 'duplicate key value'))],
      ['a syntax error', new QueryFailedError(query, [], errorWithCode('42601', 'syntax error at or near "SELEC"'))],
      ['another transaction-state error', new QueryFailedError(query, [], errorWithCode('25P02', 'aborted'))],
      ['a data exception', new QueryFailedError(query, [], errorWithCode('22003', 'integer out of range'))],
    ])('answers %s, which is a fault of ours, with the generic 500', (_case, exception) => {
      expect(databaseFault(exception)).toBeNull();
      expect(toApiError(exception).toBody()).toEqual(INTERNAL);
    });
  });

  it.each([
    ['an Error', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['a thrown string', 'boom'],
    ['null', null],
    ['undefined', undefined],
    ['a plain object', { message: 'SELECT * FROM pets' }],
  ])('answers anything else (%s) with the generic 500 message', (_case, exception) => {
    const error = toApiError(exception);

    expect(error.toBody()).toEqual(INTERNAL);
    expect(error.headers).toEqual({});
  });
});

import type { Options } from 'pino-http';
import { parseApiKeys } from '../../config/app-config.js';
import { LOG_BUFFER_MAX_BYTES, LOG_WRITE_MIN_BYTES, loggerParams } from './logger-params.js';

const base = {
  logLevel: 'info' as const,
  apiKeys: parseApiKeys('configured-key-0123456789'),
  metricsToken: 'metrics-token-0123456789',
};

describe('loggerParams', () => {
  it('writes plain JSON lines at LOG_LEVEL in production, in batches, through a bounded asynchronous buffer', () => {
    const { pinoHttp } = loggerParams({ ...base, production: true, logLevel: 'warn' });
    expect(Array.isArray(pinoHttp)).toBe(true);
    const [options, stream] = pinoHttp as [
      Options,
      { fd: number; sync: boolean; minLength: number; maxLength: number },
    ];
    expect(options).toMatchObject({ level: 'warn', autoLogging: false, quietReqLogger: true });
    expect(stream).toMatchObject({
      fd: 1,
      sync: false,
      minLength: LOG_WRITE_MIN_BYTES,
      maxLength: LOG_BUFFER_MAX_BYTES,
    });
  });

  it('writes through pino-pretty outside production', () => {
    const { pinoHttp } = loggerParams({ ...base, production: false });
    expect(Array.isArray(pinoHttp)).toBe(true);
    const [options, stream] = pinoHttp as [Options, { write: unknown }];
    expect(options.level).toBe('info');
    expect(typeof stream.write).toBe('function');
  });

  it('never serializes the request, so no header reaches a log', () => {
    const options = (loggerParams({ ...base, production: true }).pinoHttp as [Options])[0];
    const serializeRequest = options.serializers!.req as (req: unknown) => unknown;
    expect(serializeRequest({ headers: { authorization: 'Bearer x' } })).toBeUndefined();
  });

  it('scrubs the configured keys and the metrics token from every line', () => {
    const options = (loggerParams({ ...base, production: true }).pinoHttp as [Options])[0];
    const scrub = options.hooks!.streamWrite!;
    expect(scrub('{"msg":"configured-key-0123456789 metrics-token-0123456789"}')).toBe(
      '{"msg":"[redacted] [redacted]"}',
    );
  });
});

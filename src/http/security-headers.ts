import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet, { type HelmetOptions } from 'helmet';

/**
 * The policy keeps Swagger UI at /docs working: its scripts and styles are
 * served from this origin, it sets inline styles and shows data: images. No
 * upgrade-insecure-requests: the service is often reached over plain HTTP on
 * a private network.
 */
const HELMET_OPTIONS: HelmetOptions = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      baseUri: ["'self'"],
      connectSrc: ["'self'"],
      fontSrc: ["'self'", 'data:'],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
      imgSrc: ["'self'", 'data:'],
      objectSrc: ["'none'"],
      scriptSrc: ["'self'"],
      scriptSrcAttr: ["'none'"],
      styleSrc: ["'self'", "'unsafe-inline'"],
    },
  },
};

/** The headers helmet's middleware sets for `options`, recorded from one run of it. */
function helmetHeaders(options: HelmetOptions): Readonly<Record<string, string>> {
  const headers: Record<string, string> = {};
  const recorder = {
    setHeader(name: string, value: string | number) {
      headers[name] = String(value);
    },
    removeHeader(name: string) {
      delete headers[name];
    },
  };
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, (error?: unknown) => {
    if (error) throw error;
  });
  return Object.freeze(headers);
}

/**
 * Helmet's headers for our policy, worked out once: they are the same on every
 * response, and building them per request (as `@fastify/helmet` does, parsing
 * the policy each time) was the largest single cost on the hot paths (README,
 * "Performance").
 */
export const SECURITY_HEADERS = helmetHeaders(HELMET_OPTIONS);

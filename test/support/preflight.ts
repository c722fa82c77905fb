export const SHOP = 'https://shop.example';

/** The preflight a browser on SHOP sends before a `fetch` with an Authorization header. */
export const preflight = (origin: string, path = '/v1/pets', method = 'GET', requestHeaders = 'authorization') =>
  fetch(`${origin}${path}`, {
    method: 'OPTIONS',
    headers: {
      origin: SHOP,
      'access-control-request-method': method,
      'access-control-request-headers': requestHeaders,
    },
  });

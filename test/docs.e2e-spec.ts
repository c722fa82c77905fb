import { expect } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { get } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { parse } from 'yaml';
import type { OpenAPIObject } from '@nestjs/swagger';
import { DOCS_ASSET_MAX_AGE_SECONDS } from '../src/openapi/setup-docs.js';
import { request } from './support/test-app.js';
import { testAppPerBlock } from './support/test-app-per-block.js';

/** The bytes as sent (fetch would decompress them), with the headers that matter to a cache. */
const fetchRaw = (url: string, headers: Record<string, string>) =>
  new Promise<{ status: number; headers: Record<string, string | undefined>; body: Buffer }>((resolve, reject) =>
    get(url, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const { 'cache-control': cacheControl, etag, vary, 'content-encoding': encoding } = response.headers;
        const headers = { 'cache-control': cacheControl, etag, vary, 'content-encoding': encoding };
        resolve({ status: response.statusCode!, headers, body: Buffer.concat(chunks) });
      });
    }).on('error', reject),
  );

const committed = async () =>
  JSON.parse(await readFile(new URL('../openapi.json', import.meta.url), 'utf8')) as OpenAPIObject;

describe('API documentation routes', () => {
  const t = testAppPerBlock();

  it.each<[string, RegExp, (text: string) => unknown]>([
    ['/docs-json', /^application\/json/, (text) => JSON.parse(text) as unknown],
    ['/docs-yaml', /^text\/yaml/, (text) => parse(text) as unknown],
  ])('serves the OpenAPI document at %s without a key, as committed in openapi.json', async (path, type, read) => {
    const response = await request(t.origin, path);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(type);
    expect(read(response.text)).toEqual(await committed());
  });

  it('serves Swagger UI at /docs, with every asset from the service itself, and redirects /docs/ there relatively so that a proxy prefix stays', async () => {
    const page = await request(t.origin, '/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const assets = [...page.text.matchAll(/(?:src|href)=['"]([^'"]+)['"]/g)].map((match) => match[1]);
    expect(assets).toEqual(
      expect.arrayContaining(['./docs/swagger-ui-bundle.js', './docs/swagger-ui.css', './docs/swagger-ui-init.js']),
    );
    for (const asset of assets) {
      expect(asset).not.toMatch(/^(https?:)?\/\//);
      const response = await request(t.origin, new URL(asset, `${t.origin}/docs`).pathname);
      expect([asset, response.status]).toEqual([asset, 200]);
    }
    const init = await request(t.origin, '/docs/swagger-ui-init.js');
    expect(init.text).toContain('"operationId": "listPets"');
    const slash = await fetch(`${t.origin}/docs/?deepLink=1`, { redirect: 'manual' });
    expect(slash.status).toBe(301);
    expect(slash.headers.get('location')).toBe('../docs?deepLink=1');
  });

  it('serves Swagger UI’s script gzipped to a browser that takes it, cacheable, and 304 while unchanged', async () => {
    const url = `${t.origin}/docs/swagger-ui-bundle.js`;
    const plain = await fetchRaw(url, { 'accept-encoding': 'identity' });
    const gzipped = await fetchRaw(url, { 'accept-encoding': 'gzip, deflate, br' });
    const cacheable = { 'cache-control': `public, max-age=${DOCS_ASSET_MAX_AGE_SECONDS}`, vary: 'Accept-Encoding' };
    expect([plain.status, plain.headers]).toEqual([
      200,
      { ...cacheable, etag: expect.stringMatching(/^"[\w-]+"$/), 'content-encoding': undefined },
    ]);
    expect([gzipped.status, gzipped.headers]).toEqual([
      200,
      { ...cacheable, etag: plain.headers.etag!.replace(/"$/, '-gzip"'), 'content-encoding': 'gzip' },
    ]);
    expect(gunzipSync(gzipped.body).equals(plain.body)).toBe(true);
    expect(gzipped.body.length).toBeLessThan(plain.body.length / 3);
    expect((await fetchRaw(url, { 'accept-encoding': 'gzip;q=0' })).headers['content-encoding']).toBeUndefined();
    const revalidated = await fetchRaw(url, { 'accept-encoding': 'gzip', 'if-none-match': gzipped.headers.etag! });
    expect([revalidated.status, revalidated.body.length]).toEqual([304, 0]);
  });
});

describe('servers in the served document', () => {
  const publicBaseUrl = 'https://pets.example.org/v1';
  const stagingBaseUrl = 'https://staging.pets.example.org/v1';
  const t = testAppPerBlock({ publicBaseUrl, stagingBaseUrl });

  it('come from PUBLIC_BASE_URL and STAGING_BASE_URL, plus this server', async () => {
    const document = (await request<OpenAPIObject>(t.origin, '/docs-json')).body;
    expect(document.servers!.map((server) => server.url)).toEqual([publicBaseUrl, stagingBaseUrl, 'v1']);
  });
});

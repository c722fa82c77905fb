import { request, startTestApp, TestApp } from './support/test-app.js';

describe('scratch', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());
  it('prints', async () => {
    const out: string[] = [];
    for (const [method, path] of [['GET','/docs'],['GET','/docs/'],['GET','/docs/index.html'],['GET','/docs/swagger-ui-init.js'],['GET','/docs/swagger-ui-bundle.js'],['GET','/docs/nope.js'],['GET','/docs/LICENSE'],['POST','/docs-json'],['GET','/docs-json'],['GET','/docs-yaml'],['GET','/v1/docs-json'],['DELETE','/docs/swagger-ui.css'],['GET','/docs/docs/swagger-ui.css'], ['HEAD','/docs-json'], ['GET', '/docs/..%2fpackage.json'], ['OPTIONS','/v1/pets'], ['GET','/nothing']]) {
      const r = await request(t.origin, path, { method });
      out.push(`${method} ${path} ${r.status} ${r.headers.get('content-type')} allow=${r.headers.get('allow')} ${r.text.slice(0, 150).replace(/\n/g,' ')}`);
    }
    console.log(out.join('\n'));
  });
});

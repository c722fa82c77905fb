import { exchange, rawRequest } from './support/raw-http.js';
import { request, startTestApp, TEST_KEY } from './support/test-app.js';
it('scratch', async () => {
  const t = await startTestApp({ logLevel: 'debug' });
  try {
    for (let i = 0; i < 2; i++) {
      await exchange(t.origin, (socket) => {
        socket.write(rawRequest('POST', '/v1/pets', [['Host','a'], ['Authorization', `Bearer ${TEST_KEY}`], ['Content-Type','application/json'], ['Content-Length', '100']]) + '{"name":');
        setTimeout(() => socket.destroy(), 50);
      }).catch((e) => console.log('exchange', e));
    }
    await new Promise((r) => setTimeout(r, 500));
    const text = (await request(t.origin, '/metrics')).text;
    console.log(text.split('\n').filter((l) => l.startsWith('http_requests_total')).join('\n'));
  } finally { await t.close(); }
}, 60000);

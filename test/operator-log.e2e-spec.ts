import { ensureBuilt } from './support/built-service.js';
import { EmbeddedServer, startEmbeddedServer } from './support/database-server.js';
import { pollUntil } from './support/poll.js';
import { ServiceProcess, startService } from './support/service-process.js';
import { createTestDatabase } from './support/test-database.js';

const KEY = 'operator-log-key-0123456789';
/** The outage grace the service runs with (READINESS_OUTAGE_GRACE_MS), which the readiness test waits out. */
const GRACE_MS = 5_000;
const OUTAGE_TEST_MS = 2 * GRACE_MS + 90_000;

/** What the built service tells its operator on stdout, against a PostgreSQL the last test stops and starts. */
describe('the service log', () => {
  let server: EmbeddedServer;
  let service: ServiceProcess;

  beforeAll(async () => {
    await ensureBuilt();
    server = await startEmbeddedServer();
    const database = await createTestDatabase(server.adminUrl);
    service = await startService({
      DATABASE_URL: database.url,
      API_KEYS: KEY,
      READINESS_OUTAGE_GRACE_MS: String(GRACE_MS),
    });
  }, 300_000);

  afterAll(async () => {
    service?.kill('SIGTERM');
    await service?.exited;
    await server?.stop();
  }, 60_000);

  it('prints only routes that exist where it says they are', async () => {
    const routeLines = service.lines.filter((line) => /\{\/[^}]*\}/.test(line));
    const mapped = routeLines.map((line) => /Mapped \{([^,]+), (\w+)\} route/.exec(line));
    // No controller headings such as "HealthController {/v1/health}:", which named a prefix the routes do not have.
    expect(routeLines.filter((_, index) => !mapped[index])).toEqual([]);
    expect(mapped.map((match) => `${match![2]} ${match![1]}`).sort()).toEqual([
      'GET /health/live',
      'GET /health/ready',
      'GET /metrics',
      'GET /v1/pets',
      'GET /v1/pets/:petId',
      'POST /v1/pets',
    ]);
    const answered: string[] = [];
    for (const match of mapped) {
      const [, path, method] = match!;
      const response = await fetch(`${service.origin}${path.replace(':petId', '1')}`, {
        method,
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: method === 'POST' ? JSON.stringify({ name: 'Rex', categoryId: 1 }) : undefined,
      });
      answered.push(`${method} ${path} ${response.status}`);
    }
    expect(answered.filter((line) => line.endsWith(' 404'))).toEqual([]);
  }, 30_000);

  it(
    'logs one line when readiness is lost and one when it returns, not a stack per probe',
    async () => {
      const before = service.lines.length;
      await server.pause();
      try {
        // Ready stays 200 for the grace (a failover), then the outage shows.
        await pollUntil(async () => (await fetch(`${service.origin}/health/ready`)).status === 503, {
          timeoutMs: 2 * GRACE_MS + 5_000,
          intervalMs: 250,
          what: 'ready to turn 503',
        });
        for (let probe = 0; probe < 5; probe += 1) {
          expect((await fetch(`${service.origin}/health/ready`)).status).toBe(503);
        }
      } finally {
        await server.start();
      }
      await pollUntil(async () => (await fetch(`${service.origin}/health/ready`)).status === 200, {
        timeoutMs: 30_000,
        what: 'ready to return to 200',
      });

      const during = service.lines.slice(before);
      // One line as the outage shows, one as the database answers again and the recovery period starts.
      expect(during.filter((line) => /Not ready/.test(line))).toEqual([
        expect.stringMatching(/WARN .*Not ready: database: (?!answering again)/),
        expect.stringMatching(
          /WARN .*Not ready: database: answering again; back in service once fewer than half its recent rounds fail/,
        ),
      ]);
      expect(during.filter((line) => /Ready again/.test(line))).toHaveLength(1);
      expect(during.join('\n')).not.toMatch(/ServiceUnavailableException|ERROR|\n\s+at /);
      // The outage's three lines, and at most one from the start.
      expect(during.filter((line) => /Ready|Not ready/.test(line))).toHaveLength(3);
      expect(service.lines.filter((line) => /Ready|Not ready/.test(line)).length).toBeLessThanOrEqual(4);
    },
    OUTAGE_TEST_MS,
  );
});

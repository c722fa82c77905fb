import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import { Client } from 'pg';
import { startTcpProxy, type TcpProxy } from '../../dev/tcp-proxy.js';
import { parse, stringify } from 'yaml';
import { apikey, ensureBuilt, ROOT, run } from '../support/built-service.js';
import { EmbeddedServer, freePort, startEmbeddedServer } from '../support/database-server.js';
import { type Balancer, type Daemon, daemon, startHaproxy, statusOf } from '../support/fleet/debian-services.js';
import { pollUntil } from '../support/poll.js';
import { ServiceProcess, startService } from '../support/service-process.js';
import { createTestDatabase } from '../support/test-database.js';

/**
 * The shipped alert rules, durations shortened, in Debian's Prometheus and Alertmanager, delivered to a webhook here and
 * logged to test/artifacts/alerts-live.log. Three lanes side by side, each a deployment as the rules see it (they
 * aggregate by job): its PostgreSQL, two built instances, a Prometheus labelling its alerts with `lane`.
 */
const ALERTS = join(ROOT, 'k8s', 'alerts');
const LOG = join(ROOT, 'test', 'artifacts', 'alerts-live.log');
const API_KEY = 'alerts-live-key-0123456789abcdef';
const METRICS_TOKEN = 'alerts-live-metrics-token-0123456789';
/** The job name the rules select the service's targets by (docs/operating.md, "Metrics"). */
const JOB = 'animal-store';
const EXPIRING = 'AnimalStoreApiKeysExpiringSoon';
const UNREACHABLE = 'AnimalStoreDatabaseUnreachable';

/** One factor for all durations keeps each rule's shape; the shortest window keeps enough samples for rate(). */
const TIME_SCALE = 20;
const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3_600, d: 86_400 };

function scaled(duration: string): string {
  const match = /^(\d+)([smhd])$/.exec(duration);
  if (!match) throw new Error(`unexpected duration ${duration} in the rules`);
  return `${Math.max(1, Math.round((Number(match[1]) * UNIT_SECONDS[match[2]]) / TIME_SCALE))}s`;
}

/**
 * The shipped rules with every duration scaled down. Left out: the budget-burn tickets, whose 6 h window would outlast
 * every scenario's wait even scaled, and the backup alerts, whose series nothing here serves (promtool tests them).
 */
function shortenedRules(): string {
  const rules = parse(readFileSync(join(ALERTS, 'animal-store.rules.yaml'), 'utf8')) as {
    groups: { rules: { alert?: string; expr: string; for?: string }[] }[];
  };
  for (const group of rules.groups)
    group.rules = group.rules.filter((rule) => !/BudgetBurn$|^AnimalStoreBackup/.test(rule.alert ?? ''));
  for (const rule of rules.groups.flatMap((group) => group.rules)) {
    if (rule.for) rule.for = scaled(rule.for);
    rule.expr = rule.expr.replace(/\[(\d+[smhd])\]/g, (_, window: string) => `[${scaled(window)}]`);
  }
  return stringify(rules);
}

interface Alert {
  status: 'firing' | 'resolved';
  labels: Record<string, string>;
}

interface Notification extends Alert {
  /** Milliseconds since the scenario's fault. */
  at: number;
  alertname: string;
}

/** What one lane was delivered: every alert of every notification, in the order they came. */
class Receiver {
  /** What the current scenario was delivered. */
  readonly received: Notification[] = [];
  /** Each alert's latest status, by its labels, across scenarios. */
  private readonly latest = new Map<string, string>();
  private since = Date.now();
  private scenario = 'start';

  record({ status, labels }: Alert): void {
    const notification = { at: this.elapsed(), status, alertname: labels.alertname, labels };
    this.received.push(notification);
    this.latest.set(JSON.stringify(labels), status);
    this.note(`+${(notification.at / 1000).toFixed(1)}s ${status} ${JSON.stringify(labels)}`);
  }

  note(text: string): void {
    appendFileSync(LOG, `${new Date().toISOString()} [${this.scenario}] ${text}\n`);
  }

  /** A new scenario: its fault happens now; what came before is forgotten. */
  begin(scenario: string): void {
    this.received.length = 0;
    this.since = Date.now();
    this.scenario = scenario;
    this.note('fault');
  }

  elapsed(): number {
    return Date.now() - this.since;
  }

  /** The alerts delivered with this status, by name, but those of `except`. */
  names(status: Alert['status'], except: string[] = []): string[] {
    const matching = this.received.filter((n) => n.status === status && !except.includes(n.alertname));
    return [...new Set(matching.map((n) => n.alertname))].sort();
  }

  /** Every alert (by its labels) ever delivered firing, in any scenario, has been delivered resolved after it. */
  allResolved(): boolean {
    return [...this.latest.values()].every((status) => status === 'resolved');
  }
}

/** Alertmanager's webhook: each alert to its lane's receiver, by its `lane` label. */
function webhook(receivers: Map<string, Receiver>): Server {
  return createServer((request, response) => {
    void text(request).then((body) => {
      for (const alert of (JSON.parse(body) as { alerts: Alert[] }).alerts)
        receivers.get(alert.labels.lane)?.record(alert);
      response.end();
    });
  });
}

type Scenario = (lane: Lane) => Promise<void>;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const getJson = async <T>(url: string) => (await (await fetch(url)).json()) as T;

/** For `ms`, each step in turn, over and over: its action, then its wait (the waits are a fault's timing). */
async function alternate(ms: number, ...steps: [() => Promise<void>, number][]): Promise<void> {
  for (const end = Date.now() + ms; Date.now() < end;) {
    for (const [act, waitMs] of steps) {
      await act();
      await sleep(waitMs);
    }
  }
}

/** Until `ms` since `from` have passed, or sooner once `broken` (what must not happen) holds. */
async function watch(from: number, ms: number, broken: () => boolean): Promise<void> {
  const what = `${ms} ms to pass`;
  await pollUntil(() => broken() || Date.now() - from >= ms, { timeoutMs: ms + 15_000, intervalMs: 250, what });
}

/** Runs `step` again and again, `intervalMs` apart, until `done` settles. */
async function repeatUntil(done: Promise<unknown>, intervalMs: number, step: () => Promise<void>): Promise<void> {
  let running = true;
  const repeating = (async () => {
    while (running) {
      await step();
      await sleep(intervalMs);
    }
  })();
  try {
    await done;
  } finally {
    running = false;
    await repeating;
  }
}

/** What one lane's scenarios act on and watch. */
class Lane {
  readonly receiver = new Receiver();
  database?: EmbeddedServer;
  databaseUrl = '';
  /** Instance 0's own path to the database, in the lane that cuts it (elsewhere it goes straight to the database). */
  path0?: TcpProxy;
  prometheus?: Daemon;
  prometheusOrigin = '';
  readonly instances: ServiceProcess[] = [];
  private traffic?: Promise<void>;
  private trafficOn = false;
  /** While set, the traffic goes through this HAProxy instead of straight to the instances. */
  balancer?: Balancer;

  constructor(
    readonly name: string,
    private readonly scenarios: Scenario[],
  ) {}

  async startDatabase(): Promise<void> {
    this.database = await startEmbeddedServer();
    this.databaseUrl = (await createTestDatabase(this.database.adminUrl)).url;
    // The proxy runs in this process, beside every lane's traffic: only the lane whose scenario cuts it has one.
    if (this.scenarios.includes(oneInstanceCutOff)) this.path0 = await startTcpProxy(this.database.port);
  }

  /** Its instances, one after the other: the first applies the migrations. */
  async startInstances(): Promise<void> {
    const viaPath0 = this.path0 && { hostname: '127.0.0.1', port: String(this.path0.port) };
    const url0 = viaPath0 ? Object.assign(new URL(this.databaseUrl), viaPath0).toString() : this.databaseUrl;
    const env = {
      NODE_ENV: 'production',
      MIGRATIONS_RUN: 'true',
      API_KEYS: API_KEY,
      CURSOR_SECRET: 'alerts-live-cursor-secret-0123456789',
      METRICS_TOKEN,
      LOG_LEVEL: 'warn',
      // Within the key's budget: a 429 would keep requests from the database and its faults.
      RATE_LIMIT_PER_MINUTE: '6000',
      // Out of the balancer sooner into an outage: the scenarios behind HAProxy wait less.
      READINESS_OUTAGE_GRACE_MS: '5000',
    };
    for (const url of [url0, this.databaseUrl]) this.instances.push(await startService({ ...env, DATABASE_URL: url }));
  }

  /** Its Prometheus, sending to Alertmanager, once nothing of its start is left to deliver. */
  async startPrometheus(scratch: string, alertmanagerPort: number): Promise<void> {
    const prometheusPort = await freePort();
    this.prometheusOrigin = `http://127.0.0.1:${prometheusPort}`;
    const config = join(scratch, `prometheus-${this.name}.yml`);
    await writeFile(
      config,
      stringify({
        global: {
          scrape_interval: '1s',
          scrape_timeout: '1s',
          evaluation_interval: '1s',
          external_labels: { lane: this.name },
        },
        rule_files: [join(scratch, 'animal-store.rules.yaml')],
        alerting: { alertmanagers: [{ static_configs: [{ targets: [`127.0.0.1:${alertmanagerPort}`] }] }] },
        scrape_configs: [
          {
            job_name: JOB,
            authorization: { credentials_file: join(scratch, 'metrics-token') },
            static_configs: [{ targets: this.instances.map(({ origin }) => new URL(origin).host) }],
          },
        ],
      }),
    );
    expect(await run('promtool', ['check', 'config', config])).toMatchObject({ code: 0 });
    this.prometheus = daemon('prometheus', [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(scratch, `prometheus-${this.name}`)}`,
      `--web.listen-address=127.0.0.1:${prometheusPort}`,
      // Alerts go to Alertmanager every second while they fire (by default every minute).
      '--rules.alert.resend-delay=1s',
    ]);
    // Before its first scrapes a fresh Prometheus has no `up` series, and AnimalStoreDown (absent) may fire and resolve
    // at once: the scenarios start once nothing is pending, firing or left to deliver.
    await this.prometheus.until(
      async () => {
        type Targets = { data: { activeTargets: { health: string }[] } };
        const targets = (await getJson<Targets>(`${this.prometheusOrigin}/api/v1/targets`)).data.activeTargets;
        const queued = await getJson<Alert[]>(`http://127.0.0.1:${alertmanagerPort}/api/v2/alerts`);
        return (
          targets.length === 2 &&
          targets.every((target) => target.health === 'up') &&
          (await this.prometheusAlerts()).length === 0 &&
          queued.every((alert) => alert.labels.lane !== this.name) &&
          this.receiver.allResolved()
        );
      },
      { timeoutMs: 120_000, intervalMs: 250, what: `both instances scraped, no alert held (lane ${this.name})` },
    );
  }

  /** Traffic on, then its scenarios in turn, each one's outcome for its test to await. */
  run(outcomes: Map<Scenario, Promise<void>>): void {
    this.trafficOn = true;
    this.traffic = this.runTraffic();
    let previous: Promise<unknown> = Promise.resolve();
    for (const scenario of this.scenarios) {
      // Each in turn, whatever the previous one's outcome (as tests in a file run).
      const result = previous.then(() => scenario(this));
      outcomes.set(scenario, result);
      // Handled here too: its test reports a failure; until then it is not an unhandled rejection.
      previous = result.catch(() => undefined);
    }
  }

  async stop(): Promise<void> {
    this.trafficOn = false;
    await this.traffic;
    await this.balancer?.stop();
    await this.prometheus?.stop();
    for (const instance of this.instances) {
      instance.kill('SIGKILL');
      await instance.exited;
    }
    await this.path0?.close();
    await this.database?.stop();
  }

  /**
   * Traffic as clients and a load balancer make it: lists, creates, a 404, two 400s and the readiness probe; not the
   * deprecated getPet, which has its own alert.
   */
  private async runTraffic(): Promise<void> {
    const headers = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };
    const send = (origin: string, path: string, init: RequestInit = {}) =>
      fetch(`${origin}${path}`, { headers, ...init, signal: AbortSignal.timeout(2_000) }).then(
        (response) => response.arrayBuffer(),
        () => undefined,
      );
    for (let round = 0; this.trafficOn && round < 100_000; round++) {
      // Behind HAProxy, its own checks are the readiness probes.
      const balancer = this.balancer;
      const origins = balancer ? [balancer.origins.strict] : this.instances.map(({ origin }) => origin);
      const pet = round % 5 === 0 ? { name: `live-${round}`, categoryId: 1 } : { name: '' };
      await Promise.all(
        origins.flatMap((origin) => [
          ...(balancer ? [] : [send(origin, '/health/ready')]),
          send(origin, '/v1/pets?limit=5'),
          send(origin, '/v1/no-such-resource'),
          send(origin, '/v1/pets?limit=many'),
          send(origin, '/v1/pets', { method: 'POST', body: JSON.stringify(pet) }),
        ]),
      );
      await sleep(250);
    }
  }

  /** The alerts this lane's Prometheus holds (pending or firing): what a failed wait says it saw. */
  async prometheusAlerts(): Promise<string[]> {
    type Alerts = { data: { alerts: { labels: Record<string, string>; state: string }[] } };
    const answer = await getJson<Alerts>(`${this.prometheusOrigin}/api/v1/alerts`);
    return answer.data.alerts.map((alert) => `${alert.labels.alertname} ${alert.state}`);
  }

  async waitFor(what: string, condition: () => boolean, timeoutMs: number): Promise<void> {
    await pollUntil(condition, { timeoutMs, intervalMs: 250, what: `${what} (lane ${this.name})` }).catch(
      async (error: Error) => {
        const held = await this.prometheusAlerts().catch(() => ['(Prometheus did not answer)']);
        const seen = `delivered: ${JSON.stringify(this.receiver.received)}; Prometheus holds: ${JSON.stringify(held)}`;
        throw new Error(`${error.message}; ${seen}`, { cause: error });
      },
    );
  }

  /** Waits for `alertname` to be delivered firing, then checks the labels it was delivered with. */
  async waitForFiring(alertname: string, labels: Record<string, string>): Promise<void> {
    const delivered = () => this.receiver.names('firing').includes(alertname);
    await this.waitFor(`${alertname} to be delivered firing`, delivered, 180_000);
    expect(this.receiver.received.find((n) => n.alertname === alertname)!.labels).toMatchObject(labels);
  }

  /** Until HAProxy's strict backend holds instance 0 (`a`) and 1 (`b`) in these states, not in a transition. */
  async waitForBalancer(what: string, a: 'UP' | 'DOWN', b = a): Promise<void> {
    const holds = async () => {
      const { strict } = await this.balancer!.states();
      return strict.a === a && strict.b === b;
    };
    await pollUntil(holds, { timeoutMs: 90_000, intervalMs: 250, what: `${what} (lane ${this.name})` });
  }

  /** Both instances behind HAProxy with the shipped checks (compose/haproxy.cfg), then `scenario` begins. */
  async behindBalancer(scenario: string): Promise<void> {
    const [a, b] = this.instances.map(({ origin }) => Number(new URL(origin).port));
    this.balancer = await startHaproxy({ a, b }, { interMs: 1_000, fall: 2, rise: 2 });
    await this.waitForBalancer('HAProxy to see both instances up', 'UP');
    this.receiver.begin(scenario);
  }

  /** The fault over (`scenario` begun, if given): both instances back in HAProxy, every alert delivered resolved. */
  async resolvedWithoutBalancer(scenario?: string): Promise<void> {
    if (scenario) this.receiver.begin(scenario);
    await this.waitForBalancer('HAProxy to have both instances in once the fault is over', 'UP');
    await this.waitFor('every alert to be delivered resolved', () => this.receiver.allResolved(), 240_000);
    await this.balancer!.stop();
    this.balancer = undefined;
  }

  /** Sends a signal to every process of the lane's PostgreSQL: SIGSTOP freezes it whole, SIGCONT resumes it. */
  async signalPostgres(signal: 'SIGSTOP' | 'SIGCONT'): Promise<void> {
    const pidFile = await readFile(join(this.database!.directory, 'postgres', 'postmaster.pid'), 'utf8');
    const postmaster = Number(pidFile.split('\n')[0]);
    const children = async () => {
      const pkill = await run('pkill', [`--signal=${signal}`, '-P', String(postmaster)]);
      // pkill exits 1 when no process matched.
      if (pkill.code !== 0 && pkill.code !== 1) throw new Error(`pkill failed: ${pkill.stderr}`);
    };
    // Frozen from the top (no new child meanwhile), resumed from the bottom.
    if (signal === 'SIGSTOP') process.kill(postmaster, signal);
    await children();
    if (signal === 'SIGCONT') process.kill(postmaster, signal);
  }

  /** Until `done` settles: lists through HAProxy; samples of HAProxy's view, instance 0's readiness and its gauge. */
  async measure(done: Promise<unknown>) {
    const balancer = this.balancer!;
    const { origin } = this.instances[0];
    const headers = { authorization: `Bearer ${METRICS_TOKEN}` };
    const counts = { requests: 0, answered2xx: 0, samples: 0, out: { a: 0, b: 0 }, unready: 0, reachable: 0 };
    await Promise.all([
      repeatUntil(done, 100, async () => {
        const status = await statusOf(`${balancer.origins.strict}/v1/pets?limit=5`, 5_000, API_KEY);
        counts.requests += 1;
        if (status !== null && status >= 200 && status < 300) counts.answered2xx += 1;
      }),
      repeatUntil(done, 250, async () => {
        const scraped = fetch(`${origin}/metrics`, { headers, signal: AbortSignal.timeout(2_000) });
        const [states, ready, metrics] = await Promise.all([
          balancer.states(),
          statusOf(`${origin}/health/ready`),
          scraped.then((response) => response.text()).catch(() => ''),
        ]);
        counts.samples += 1;
        for (const server of ['a', 'b'] as const) if (states.strict[server].startsWith('DOWN')) counts.out[server] += 1;
        if (ready === 503) counts.unready += 1;
        if (/^animal_store_database_reachable 1$/m.test(metrics)) counts.reachable += 1;
      }),
    ]);
    this.receiver.note(JSON.stringify(counts));
    return counts;
  }
}

async function healthyMinute(lane: Lane): Promise<void> {
  const { receiver } = lane;
  receiver.begin('healthy minute');
  await watch(Date.now(), 60_000, () => receiver.received.length > 0);
  expect(receiver.received).toEqual([]);
  // The rules were evaluated all along, over series that exist.
  const query = `${lane.prometheusOrigin}/api/v1/query?query=${encodeURIComponent(`sum(up{job="${JOB}"})`)}`;
  const answer = await getJson<{ data: { result: { value: [number, string] }[] } }>(query);
  expect(answer.data.result[0].value[1]).toBe('2');
}

async function outageUnderTraffic(lane: Lane): Promise<void> {
  const { receiver, database } = lane;
  receiver.begin('database stopped under traffic');
  await database!.pause();
  const expected = [
    'AnimalStoreAvailabilityFastBurn',
    'AnimalStoreDatabaseFaults',
    UNREACHABLE,
    'AnimalStoreNoInstanceReady',
    'AnimalStoreNotReady',
  ];
  await lane.waitFor(
    `${expected.join(', ')} (for both instances) to be delivered firing`,
    () =>
      expected.every((name) => receiver.names('firing').includes(name)) &&
      new Set(
        receiver.received
          .filter((n) => n.status === 'firing' && n.alertname === 'AnimalStoreNotReady')
          .map((n) => n.labels.instance),
      ).size === 2,
    240_000,
  );
  // The slow burn may join them; nothing else: no latency burn, no load shedding.
  expect(receiver.names('firing', ['AnimalStoreAvailabilitySlowBurn'])).toEqual(expected);
  expect(receiver.received.find((n) => n.alertname === 'AnimalStoreAvailabilityFastBurn')!.labels).toMatchObject({
    job: JOB,
    severity: 'critical',
  });
  expect(receiver.received.filter((n) => n.alertname === 'AnimalStoreDatabaseFaults')).toContainEqual(
    expect.objectContaining({ labels: expect.objectContaining({ sqlstate_class: '08' }) as unknown }),
  );

  const fired = receiver.names('firing');
  receiver.begin('database started again');
  await database!.start();

  // Meanwhile (the slow burn takes longest to resolve), an alert that shares nothing with the outage's: a key issued a
  // year ago, in its last 3 days (keys whose whole life is 7 days or less are not counted).
  const key = 'alerts-live-expiring';
  expect(await apikey(lane.databaseUrl, 'create', key, '--expires-in', '30d')).toMatchObject({ code: 0 });
  const sql = new Client({ connectionString: lane.databaseUrl });
  await sql.connect();
  try {
    await sql.query(
      `UPDATE api_keys SET created_at = now() - interval '362 days', expires_at = now() + interval '3 days'
        WHERE name = $1`,
      [key],
    );
    await lane.waitForFiring(EXPIRING, { job: JOB, severity: 'warning' });
    const revokedAt = receiver.elapsed();
    await sql.query('UPDATE api_keys SET revoked_at = now() WHERE name = $1', [key]);
    await lane.waitFor(
      'every alert to be delivered resolved',
      () => [...fired, EXPIRING].every((name) => receiver.names('resolved').includes(name)) && receiver.allResolved(),
      240_000,
    );
    const resolvedKey = receiver.received.find((n) => n.alertname === EXPIRING && n.status === 'resolved')!;
    expect(resolvedKey.at).toBeGreaterThanOrEqual(revokedAt);
  } finally {
    await sql.end();
  }
  // The key fired nothing but its alert; the slow burn may fire only now, its window still holding the outage.
  expect(receiver.names('firing', [EXPIRING, 'AnimalStoreAvailabilitySlowBurn', ...fired])).toEqual([]);
  expect(receiver.names('resolved')).toEqual([...new Set([...fired, ...receiver.names('firing')])].sort());
}

async function stoppedThenFlapping(lane: Lane): Promise<void> {
  const { receiver, database } = lane;
  await lane.behindBalancer('database stopped behind HAProxy');
  await database!.pause();
  await lane.waitForBalancer('HAProxy to take both instances out', 'DOWN');
  const outAt = Date.now();
  await lane.waitForFiring(UNREACHABLE, { job: JOB, severity: 'critical' });
  // It holds while no request reaches the instances: 15 s here is 5 minutes of the shipped rules.
  await watch(outAt, 15_000, () => receiver.names('resolved').includes(UNREACHABLE));
  expect(receiver.names('resolved')).not.toContain(UNREACHABLE);
  expect((await lane.balancer!.states()).strict).toEqual({ a: 'DOWN', b: 'DOWN' });

  receiver.begin('flapping database');
  const counts = await lane.measure(
    alternate(36_000, [() => database!.start(), 1_000], [() => database!.pause(), 2_000]),
  );
  // The database did answer some rounds: the path flapped, it was not simply down.
  expect(counts.reachable).toBeGreaterThan(0);
  expect(counts.unready / counts.samples).toBeGreaterThanOrEqual(0.9);
  expect(counts.out).toEqual({ a: counts.samples, b: counts.samples });

  receiver.begin('database back behind HAProxy');
  await database!.start();
  // The page among them: it was delivered firing above.
  await lane.resolvedWithoutBalancer();
}

async function databaseStalling(lane: Lane): Promise<void> {
  await lane.behindBalancer('database stalling');
  const signal = (name: 'SIGSTOP' | 'SIGCONT') => () => lane.signalPostgres(name);
  const stalls = alternate(36_000, [signal('SIGSTOP'), 2_000], [signal('SIGCONT'), 4_000]).finally(signal('SIGCONT'));
  const counts = await lane.measure(stalls);
  expect(counts.requests).toBeGreaterThan(0);
  expect(counts.answered2xx / counts.requests).toBeGreaterThanOrEqual(0.9);
  expect(counts.out).toEqual({ a: 0, b: 0 });

  await lane.resolvedWithoutBalancer('stalls over');
}

async function oneInstanceCutOff(lane: Lane): Promise<void> {
  await lane.behindBalancer('one instance cut off');
  lane.path0!.blackHole();
  try {
    await lane.waitForBalancer('HAProxy to take the cut-off instance out', 'DOWN', 'UP');
    // With it out: 10 s of requests through HAProxy, answered by the peer.
    const counts = await lane.measure(sleep(10_000));
    expect(counts.requests).toBeGreaterThan(0);
    expect(counts.answered2xx).toBe(counts.requests);
    expect(counts.out).toEqual({ a: counts.samples, b: 0 });
  } finally {
    lane.path0!.forward();
  }
  await lane.resolvedWithoutBalancer('path restored');
}

/**
 * The lanes, and the scenarios each runs in turn by the titles of their tests. A lane's longest wait is the slow burn
 * resolving: the outage and the flapping database, which fire it, are in different lanes. The stalls, which measure
 * HAProxy's checks against a 2 s pause, come last, once the flapping database's restarts are over.
 */
const LANES: Record<string, Record<string, Scenario>> = {
  a: {
    'a healthy minute of mixed traffic delivers nothing': healthyMinute,
    'one instance cut off from the database while its peer is not: that one is taken out, its peer stays in and serves':
      oneInstanceCutOff,
  },
  b: {
    'an outage under traffic: the fast-burn page, the unreachable database, its faults and readiness; all resolve, and meanwhile a year-long key in its last 3 days fires AnimalStoreApiKeysExpiringSoon until it is revoked':
      outageUnderTraffic,
    'the whole database stalling 2 s in every 6 s: through HAProxy at least 90% of requests answer 2xx and neither instance is taken out':
      databaseStalling,
  },
  c: {
    'behind HAProxy, the database stopped: the instances are taken out and, with no request reaching them, AnimalStoreDatabaseUnreachable pages; then flapping: readiness answers 503 to at least 90% of probes and HAProxy keeps the instances out; all resolve once it holds':
      stoppedThenFlapping,
  },
};

describe('alerts against a live Prometheus and Alertmanager', () => {
  let scratch = '';
  let receiving: Server | undefined;
  let alertmanager: Daemon | undefined;
  const lanes = Object.entries(LANES).map(([name, scenarios]) => new Lane(name, Object.values(scenarios)));
  /** Each scenario's outcome, which its test awaits; the lanes run them from the end of beforeAll. */
  const outcomes = new Map<Scenario, Promise<void>>();

  beforeAll(async () => {
    mkdirSync(join(ROOT, 'test', 'artifacts'), { recursive: true });
    await writeFile(LOG, '');
    await ensureBuilt();
    scratch = await mkdtemp(join(tmpdir(), 'animal-store-alerts-'));
    await chmod(scratch, 0o755);

    const server = (receiving = webhook(new Map(lanes.map((lane) => [lane.name, lane.receiver]))));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const alertmanagerPort = await freePort();
    await writeFile(
      join(scratch, 'alertmanager.yml'),
      stringify({
        // Every alert on its own, delivered at once and again as soon as it changes.
        route: { receiver: 'test', group_by: ['...'], group_wait: '1s', group_interval: '1s', repeat_interval: '1h' },
        receivers: [{ name: 'test', webhook_configs: [{ url, send_resolved: true }] }],
      }),
    );
    alertmanager = daemon('prometheus-alertmanager', [
      `--config.file=${join(scratch, 'alertmanager.yml')}`,
      `--storage.path=${join(scratch, 'alertmanager')}`,
      `--web.listen-address=127.0.0.1:${alertmanagerPort}`,
      // A single Alertmanager: no cluster port.
      '--cluster.listen-address=',
    ]);
    await alertmanager.until(async () => (await fetch(`http://127.0.0.1:${alertmanagerPort}/-/ready`)).ok, {
      timeoutMs: 30_000,
      what: 'Alertmanager to be ready',
    });

    await writeFile(join(scratch, 'animal-store.rules.yaml'), shortenedRules());
    await writeFile(join(scratch, 'metrics-token'), METRICS_TOKEN);
    await Promise.all(lanes.map((lane) => lane.startDatabase()));
    // One lane at a time: six instances starting at once on a busy machine miss the service's time to be ready.
    for (const lane of lanes) await lane.startInstances();
    await Promise.all(lanes.map((lane) => lane.startPrometheus(scratch, alertmanagerPort)));

    // Every lane up before any traffic: one lane's start would slow another's first requests past the latency SLO.
    for (const lane of lanes) lane.run(outcomes);
  }, 600_000);

  afterAll(async () => {
    // A scenario still running (its test timed out) gets a bounded while to end before its lane is taken down.
    await Promise.race([Promise.allSettled(outcomes.values()), sleep(30_000)]);
    await Promise.all(lanes.map((lane) => lane.stop()));
    await alertmanager?.stop();
    await new Promise((resolve) => (receiving ? receiving.close(resolve) : resolve(undefined)));
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }, 120_000);

  for (const [title, scenario] of Object.values(LANES).flatMap((scenarios) => Object.entries(scenarios))) {
    it(title, () => outcomes.get(scenario) ?? Promise.reject(new Error('the lanes did not start')), 600_000);
  }
});

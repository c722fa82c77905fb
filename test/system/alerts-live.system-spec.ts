import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { startTcpProxy, type TcpProxy } from '../../dev/tcp-proxy.js';
import { parse, stringify } from 'yaml';
import { apikey, ensureBuilt, ROOT, run } from '../support/built-service.js';
import { EmbeddedServer, freePort, startEmbeddedServer } from '../support/database-server.js';
import { type Balancer, startHaproxy } from '../support/fleet/debian-services.js';
import { pollUntil } from '../support/poll.js';
import { ServiceProcess, startService } from '../support/service-process.js';

/**
 * The alert rules against the running service: Debian's Prometheus scrapes two instances of the built service every
 * second and evaluates a copy of k8s/alerts/animal-store.rules.yaml with its durations shortened; Debian's
 * Alertmanager delivers to a webhook receiver in this test. Each scenario causes a fault and asserts the exact alert
 * names delivered firing, then resolved once the fault is gone. The receiver's log (each notification with the time
 * since the fault) is written to test/artifacts/alerts-live.log. Instance 0 reaches the database through a TCP proxy
 * of its own, so that one instance's path can be cut while its peer's holds.
 *
 * The scenarios run in three lanes side by side, each one after another in its lane. A lane is a whole deployment as
 * the rules see it: its own PostgreSQL, two instances and a Prometheus of its own scraping them as the job the rules
 * select by name, with the shipped rules unchanged but for their durations (they aggregate by job, so two lanes under
 * one Prometheus would see each other's faults). The lanes share Alertmanager and the receiver: each lane's Prometheus
 * labels its alerts with `lane`, which the receiver sorts them by.
 */
const ALERTS = join(ROOT, 'k8s', 'alerts');
const LOG = join(ROOT, 'test', 'artifacts', 'alerts-live.log');
const API_KEY = 'alerts-live-key-0123456789abcdef';
const METRICS_TOKEN = 'alerts-live-metrics-token-0123456789';
/** The job name the rules select the service's targets by (docs/operating.md, "Metrics"). */
const JOB = 'animal-store';
const EXPIRING = 'AnimalStoreApiKeysExpiringSoon';

/**
 * Every duration of the rules, their `for:` and their range windows alike, divided by this: 1m becomes 3s, a 5m
 * window 15s. One factor keeps each rule's shape (a window shorter than its `for:` stays shorter, so one fault still
 * cannot page), and the shortest window, 2m, becomes 6s: six samples at a 1 s scrape interval, enough for rate().
 */
const TIME_SCALE = 20;
const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3_600, d: 86_400 };

function scaled(duration: string): string {
  const match = /^(\d+)([smhd])$/.exec(duration);
  if (!match) throw new Error(`unexpected duration ${duration} in the rules`);
  return `${Math.max(1, Math.round((Number(match[1]) * UNIT_SECONDS[match[2]]) / TIME_SCALE))}s`;
}

interface Rule {
  alert?: string;
  expr: string;
  for?: string;
}

/**
 * The shipped rules with every duration scaled down (the shipped file is only read). The budget-burn tickets are left
 * out: their short window, 6 h, is still 18 minutes here, longer than any scenario waits for them to resolve; so are
 * the backup alerts: no backup service or kube-state-metrics runs here, and their promtool tests cover them.
 */
function shortenedRules(): string {
  const rules = parse(readFileSync(join(ALERTS, 'animal-store.rules.yaml'), 'utf8')) as {
    groups: { rules: Rule[] }[];
  };
  for (const group of rules.groups)
    group.rules = group.rules.filter((rule) => !/BudgetBurn$|^AnimalStoreBackup/.test(rule.alert ?? ''));
  for (const rule of rules.groups.flatMap((group) => group.rules)) {
    if (rule.for) rule.for = scaled(rule.for);
    rule.expr = rule.expr.replace(/\[(\d+[smhd])\]/g, (_, window: string) => `[${scaled(window)}]`);
  }
  return stringify(rules);
}

interface Notification {
  /** Milliseconds since the scenario's fault. */
  at: number;
  status: 'firing' | 'resolved';
  alertname: string;
  labels: Record<string, string>;
}

/** What one lane was delivered: every alert of every notification, in the order they came. */
class Receiver {
  /** What the current scenario was delivered. */
  readonly received: Notification[] = [];
  /** Each alert's (by its labels) latest status, across scenarios. */
  private readonly latest = new Map<string, string>();
  private since = Date.now();
  private scenario = 'start';

  record(alert: { status: 'firing' | 'resolved'; labels: Record<string, string> }): void {
    const notification = {
      at: Date.now() - this.since,
      status: alert.status,
      alertname: alert.labels.alertname,
      labels: alert.labels,
    };
    this.received.push(notification);
    this.latest.set(JSON.stringify(alert.labels), alert.status);
    appendFileSync(
      LOG,
      `${new Date().toISOString()} [${this.scenario}] +${(notification.at / 1000).toFixed(1)}s ${alert.status} ` +
        `${JSON.stringify(alert.labels)}\n`,
    );
  }

  /** A new scenario: its fault happens now; what came before is forgotten. */
  begin(scenario: string): void {
    this.received.length = 0;
    this.since = Date.now();
    this.scenario = scenario;
    appendFileSync(LOG, `${new Date().toISOString()} [${scenario}] fault\n`);
  }

  /** Milliseconds since the current scenario's fault. */
  elapsed(): number {
    return Date.now() - this.since;
  }

  /** The alerts delivered with this status, by name, but those of `except`. */
  names(status: 'firing' | 'resolved', except: string[] = []): string[] {
    const matching = this.received.filter((n) => n.status === status && !except.includes(n.alertname));
    return [...new Set(matching.map((n) => n.alertname))].sort();
  }

  /** The instances an alert was delivered for with this status. */
  instances(status: 'firing' | 'resolved', alertname: string): string[] {
    const matching = this.received.filter((n) => n.status === status && n.alertname === alertname);
    return [...new Set(matching.map((n) => n.labels.instance))].sort();
  }

  /** Every alert (by its labels) ever delivered firing, in any scenario, has been delivered resolved after it. */
  allResolved(): boolean {
    return [...this.latest.values()].every((status) => status === 'resolved');
  }
}

/** Alertmanager's webhook: each alert to its lane's receiver, by its `lane` label. */
class Webhook {
  readonly lanes = new Map<string, Receiver>();
  private readonly server: Server;

  constructor(readonly port: number) {
    this.server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        const payload = JSON.parse(body) as {
          alerts: { status: 'firing' | 'resolved'; labels: Record<string, string> }[];
        };
        for (const alert of payload.alerts) {
          const lane = this.lanes.get(alert.labels.lane);
          if (lane) lane.record(alert);
          else
            appendFileSync(
              LOG,
              `${new Date().toISOString()} [no lane] ${alert.status} ${JSON.stringify(alert.labels)}\n`,
            );
        }
        response.end();
      });
    });
  }

  listen(): Promise<void> {
    return new Promise((resolve) => this.server.listen(this.port, '127.0.0.1', resolve));
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** A long-running child (Prometheus, Alertmanager) with its output kept for the failure message. */
function daemon(command: string, args: string[]): { child: ChildProcess; output: () => string } {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  return { child, output: () => output };
}

async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Instances start one at a time, whatever their lane: six starting at once on a busy machine (the first of each lane
 * applying the migrations) miss the service's time to be ready.
 */
let startingInstance: Promise<unknown> = Promise.resolve();
function oneAtATime<T>(start: () => Promise<T>): Promise<T> {
  const started = startingInstance.then(start);
  startingInstance = started.catch(() => undefined);
  return started;
}

/** Everything one lane's scenarios act on and watch: its PostgreSQL, its two instances, its Prometheus, its HAProxy. */
class Lane {
  readonly receiver = new Receiver();
  database?: EmbeddedServer;
  databaseUrl = '';
  /** Instance 0's path to the database, in a lane that cuts it (elsewhere it goes straight to the database). */
  path0?: TcpProxy;
  private path0Url = '';
  prometheus?: ReturnType<typeof daemon>;
  prometheusOrigin = '';
  readonly ports: number[] = [];
  readonly instances: (ServiceProcess | undefined)[] = [undefined, undefined];
  private traffic?: Promise<void>;
  private trafficOn = false;
  /** While set, the traffic goes through this HAProxy instead of straight to the instances. */
  balancer?: Balancer;

  constructor(
    readonly name: string,
    private readonly scenarios: ((lane: Lane) => Promise<void>)[],
  ) {}

  private serviceEnv(i: number) {
    return {
      DATABASE_URL: i === 0 ? this.path0Url : this.databaseUrl,
      NODE_ENV: 'production',
      MIGRATIONS_RUN: 'true',
      API_KEYS: API_KEY,
      CURSOR_SECRET: 'alerts-live-cursor-secret-0123456789',
      METRICS_TOKEN,
      LOG_LEVEL: 'warn',
      // The traffic below stays within the key's budget: a 429 would keep requests from the database and its faults.
      RATE_LIMIT_PER_MINUTE: '6000',
      // Out of the balancer 5 s into an outage rather than 30: the scenarios behind HAProxy wait less.
      READINESS_OUTAGE_GRACE_MS: '5000',
    };
  }

  async startInstance(i: number): Promise<void> {
    this.instances[i] = await oneAtATime(() => startService(this.serviceEnv(i), { port: this.ports[i] }));
  }

  async killInstance(i: number): Promise<void> {
    const instance = this.instances[i]!;
    this.instances[i] = undefined;
    process.kill(instance.pid, 'SIGKILL');
    await instance.exited;
  }

  /** Its PostgreSQL, its instances and its Prometheus, sending to Alertmanager. */
  async start(scratch: string, alertmanagerPort: number): Promise<void> {
    // The lane's own PostgreSQL, which its scenarios stop and start.
    this.database = await startEmbeddedServer();
    const admin = new Client({ connectionString: this.database.adminUrl });
    await admin.connect();
    await admin.query('CREATE DATABASE alerts_live');
    await admin.end();
    this.databaseUrl = this.database.adminUrl.replace(/\/postgres$/, '/alerts_live');
    // The proxy runs in this process, beside every lane's traffic: only the lane whose scenario cuts it has one.
    if (this.scenarios.includes(oneInstanceCutOff)) {
      this.path0 = await startTcpProxy(this.database.port);
      const viaProxy = new URL(this.databaseUrl);
      viaProxy.hostname = '127.0.0.1';
      viaProxy.port = String(this.path0.port);
      this.path0Url = viaProxy.toString();
    } else this.path0Url = this.databaseUrl;

    this.ports.push(await freePort(), await freePort());
    // One after the other: the first applies the migrations.
    await this.startInstance(0);
    await this.startInstance(1);

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
            static_configs: [{ targets: this.ports.map((port) => `127.0.0.1:${port}`) }],
          },
        ],
      }),
    );
    const checked = await run('promtool', ['check', 'config', config]);
    expect(checked).toMatchObject({ code: 0 });
    const prometheus = daemon('prometheus', [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(scratch, `prometheus-${this.name}`)}`,
      `--web.listen-address=127.0.0.1:${prometheusPort}`,
      // Alerts go to Alertmanager every second while they fire (by default every minute).
      '--rules.alert.resend-delay=1s',
    ]);
    this.prometheus = prometheus;
    await pollUntil(
      async () => {
        const answer = (await (await fetch(`${this.prometheusOrigin}/api/v1/targets`)).json()) as {
          data: { activeTargets: { health: string }[] };
        };
        const targets = answer.data.activeTargets;
        return targets.length === 2 && targets.every((target) => target.health === 'up');
      },
      { timeoutMs: 60_000, what: `Prometheus of lane ${this.name} to scrape both instances` },
    ).catch((error: Error) => Promise.reject(new Error(`${error.message}\n${prometheus.output()}`)));

    // Until its first scrapes, a fresh Prometheus has no `up` series: AnimalStoreDown (absent) may fire and resolve
    // at once. The scenarios start once that has settled: nothing pending or firing, nothing left to deliver.
    await pollUntil(
      async () => {
        const held = await this.prometheusAlerts();
        const queued = (await (await fetch(`http://127.0.0.1:${alertmanagerPort}/api/v2/alerts`)).json()) as {
          labels: Record<string, string>;
        }[];
        return (
          held.length === 0 && queued.every((alert) => alert.labels.lane !== this.name) && this.receiver.allResolved()
        );
      },
      { timeoutMs: 60_000, intervalMs: 250, what: `no alert of lane ${this.name} held by Prometheus or Alertmanager` },
    );
  }

  /** Traffic on, then its scenarios in turn, each one's outcome for its test to await. */
  run(outcomes: Map<(lane: Lane) => Promise<void>, Promise<void>>): void {
    this.trafficOn = true;
    this.traffic = this.runTraffic();
    let previous: Promise<unknown> = Promise.resolve();
    for (const scenario of this.scenarios) {
      // Each in turn, whatever the previous one's outcome (as tests in a file run).
      const result = previous.then(() => scenario(this));
      // Its test reports a failure; until then it is not an unhandled rejection.
      result.catch(() => undefined);
      outcomes.set(scenario, result);
      previous = result.catch(() => undefined);
    }
  }

  async stop(): Promise<void> {
    this.trafficOn = false;
    await this.traffic;
    await this.balancer?.stop();
    await stopChild(this.prometheus?.child);
    for (const [i, instance] of this.instances.entries()) {
      if (instance) await this.killInstance(i);
    }
    await this.path0?.close();
    await this.database?.stop();
  }

  /**
   * Mixed traffic on every live instance, as clients and a load balancer make it: lists, creates, a path that does not
   * exist (404), an invalid query and an invalid body (400), and the readiness probe; not the deprecated getPet, which
   * has its own alert. At most 4 rounds a second; each request bounded.
   */
  private async runTraffic(): Promise<void> {
    const key = { authorization: `Bearer ${API_KEY}` };
    const send = (origin: string, path: string, init: RequestInit = {}) =>
      fetch(`${origin}${path}`, { ...init, signal: AbortSignal.timeout(2_000) }).then(
        (response) => response.arrayBuffer(),
        () => undefined,
      );
    for (let round = 0; this.trafficOn && round < 100_000; round++) {
      const direct = this.instances.filter((instance): instance is ServiceProcess => instance !== undefined);
      // Behind HAProxy, its own checks are the readiness probes.
      const balancer = this.balancer;
      const origins = balancer ? [balancer.origins.strict] : direct.map(({ origin }) => origin);
      await Promise.all(
        origins.flatMap((origin) => [
          ...(balancer ? [] : [send(origin, '/health/ready')]),
          send(origin, '/v1/pets?limit=5', { headers: key }),
          send(origin, '/v1/no-such-resource', { headers: key }),
          send(origin, '/v1/pets?limit=many', { headers: key }),
          round % 5 === 0
            ? send(origin, '/v1/pets', {
                method: 'POST',
                headers: { ...key, 'content-type': 'application/json' },
                body: JSON.stringify({ name: `live-${round}`, categoryId: 1 }),
              })
            : send(origin, '/v1/pets', {
                method: 'POST',
                headers: { ...key, 'content-type': 'application/json' },
                body: JSON.stringify({ name: '' }),
              }),
        ]),
      );
      await sleep(250);
    }
  }

  /** The alerts this lane's Prometheus holds now (pending or firing), by name: what a failed wait says it saw. */
  async prometheusAlerts(): Promise<string[]> {
    const answer = (await (await fetch(`${this.prometheusOrigin}/api/v1/alerts`)).json()) as {
      data: { alerts: { labels: Record<string, string>; state: string }[] };
    };
    return answer.data.alerts.map((alert) => `${alert.labels.alertname} ${alert.state}`);
  }

  async waitFor(what: string, condition: () => boolean, timeoutMs: number): Promise<void> {
    try {
      await pollUntil(condition, { timeoutMs, intervalMs: 250, what: `${what} (lane ${this.name})` });
    } catch (error) {
      const alerts = await this.prometheusAlerts().catch(() => ['(Prometheus did not answer)']);
      throw new Error(
        `${(error as Error).message}; delivered: ${JSON.stringify(this.receiver.received)}; Prometheus holds: ` +
          `${JSON.stringify(alerts)}`,
        { cause: error },
      );
    }
  }

  /** Each server's state in HAProxy's strict backend: 'UP', 'DOWN', or a transition such as 'DOWN 1/2'. */
  async balancerStates(): Promise<string[]> {
    return Object.values((await this.balancer!.states()).strict);
  }

  async waitForBalancer(state: 'UP' | 'DOWN', what: string): Promise<void> {
    await pollUntil(async () => (await this.balancerStates()).every((s) => s === state), {
      timeoutMs: 90_000,
      intervalMs: 250,
      what: `${what} (lane ${this.name})`,
    });
  }

  /** Both instances behind HAProxy with the shipped checks (compose/haproxy.cfg): every 1 s, out after 2 failures, in after 2 passes. */
  async behindBalancer(): Promise<void> {
    this.balancer = await startHaproxy({ a: this.ports[0], b: this.ports[1] }, { interMs: 1_000, fall: 2, rise: 2 });
    await this.waitForBalancer('UP', 'HAProxy to see both instances up');
  }

  /** The fault over: every alert delivered resolved, then traffic straight to the instances again. */
  async resolvedWithoutBalancer(): Promise<void> {
    await this.waitFor('every alert to be delivered resolved', () => this.receiver.allResolved(), 240_000);
    await this.balancer!.stop();
    this.balancer = undefined;
  }

  /** Sends a signal to every process of the lane's PostgreSQL by PID: SIGSTOP freezes it whole, SIGCONT resumes it. */
  async signalPostgres(signal: 'SIGSTOP' | 'SIGCONT'): Promise<void> {
    const pidFile = await readFile(join(this.database!.directory, 'postgres', 'postmaster.pid'), 'utf8');
    const postmaster = Number(pidFile.split('\n')[0]);
    // Not through run(), whose write to stdin can fail with EPIPE once pgrep has exited, as it does at once.
    const listed = await promisify(execFile)('pgrep', ['-P', String(postmaster)]).then(
      ({ stdout }) => stdout,
      (error: Error & { code?: number }) => {
        // pgrep exits 1 when there is no child.
        if (error.code === 1) return '';
        throw error;
      },
    );
    const children = listed.split('\n').filter(Boolean).map(Number);
    // Frozen from the top (no new child meanwhile), resumed from the bottom.
    for (const pid of signal === 'SIGSTOP' ? [postmaster, ...children] : [...children, postmaster]) {
      try {
        process.kill(pid, signal);
      } catch (error) {
        // A backend that ended since pgrep listed it.
        if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
      }
    }
  }

  /**
   * Lists through HAProxy, one at a time, and HAProxy's view of each instance every 250 ms, until `done` resolves:
   * how many answered 2xx, and in how many samples each instance was out.
   */
  async throughBalancer(done: Promise<unknown>) {
    const balancer = this.balancer!;
    const counts = { requests: 0, answered2xx: 0, samples: 0, out: { a: 0, b: 0 } };
    let running = true;
    const requests = async () => {
      while (running) {
        const status = await fetch(`${balancer.origins.strict}/v1/pets?limit=5`, {
          headers: { authorization: `Bearer ${API_KEY}` },
          signal: AbortSignal.timeout(5_000),
        }).then(
          async (response) => (await response.arrayBuffer(), response.status),
          () => 0,
        );
        counts.requests += 1;
        if (status >= 200 && status < 300) counts.answered2xx += 1;
        await sleep(100);
      }
    };
    const sampling = async () => {
      while (running) {
        const states = (await balancer.states()).strict;
        counts.samples += 1;
        for (const server of ['a', 'b'] as const) if (states[server].startsWith('DOWN')) counts.out[server] += 1;
        await sleep(250);
      }
    };
    const measuring = Promise.all([requests(), sampling()]);
    try {
      await done;
    } finally {
      running = false;
      await measuring;
    }
    return counts;
  }
}

/** A healthy minute of mixed traffic delivers nothing. */
async function healthyMinute(lane: Lane): Promise<void> {
  const { receiver } = lane;
  receiver.begin('healthy minute');
  const end = Date.now() + 60_000;
  // Bounded: a minute, in steps of a second, stopping at the first delivery.
  await pollUntil(() => receiver.received.length > 0 || Date.now() >= end, {
    timeoutMs: 70_000,
    intervalMs: 1_000,
    what: 'the minute to pass',
  });
  expect(receiver.received).toEqual([]);
  // The rules were evaluated all along, over series that exist.
  const answer = (await (
    await fetch(`${lane.prometheusOrigin}/api/v1/query?query=${encodeURIComponent(`sum(up{job="${JOB}"})`)}`)
  ).json()) as { data: { result: { value: [number, string] }[] } };
  expect(answer.data.result[0].value[1]).toBe('2');
}

/** The database stopped under traffic, then started again while a key in its last 3 days fires and is revoked. */
async function outageUnderTraffic(lane: Lane): Promise<void> {
  const { receiver, database } = lane;
  receiver.begin('database stopped under traffic');
  await database!.pause();
  const expected = [
    'AnimalStoreAvailabilityFastBurn',
    'AnimalStoreDatabaseFaults',
    'AnimalStoreDatabaseUnreachable',
    'AnimalStoreNoInstanceReady',
    'AnimalStoreNotReady',
  ];
  await lane.waitFor(
    `${expected.join(', ')} (for both instances) to be delivered firing`,
    () =>
      expected.every((name) => receiver.names('firing').includes(name)) &&
      receiver.instances('firing', 'AnimalStoreNotReady').length === 2,
    240_000,
  );
  // The slow burn (6 h and 30 min windows, scaled) may join them; nothing else: no latency burn, no load shedding.
  expect(receiver.names('firing').filter((name) => name !== 'AnimalStoreAvailabilitySlowBurn')).toEqual(expected);
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

  // Meanwhile (the slow burn takes longest to resolve), an alert that shares nothing with the outage's: a key
  // issued a year ago, in its last 3 days (keys whose whole life is 7 days or less are not counted).
  const created = await apikey(lane.databaseUrl, 'create', 'alerts-live-expiring', '--expires-in', '30d');
  expect(created).toMatchObject({ code: 0 });
  const sql = new Client({ connectionString: lane.databaseUrl });
  await sql.connect();
  try {
    await sql.query(
      `UPDATE api_keys SET created_at = now() - interval '362 days', expires_at = now() + interval '3 days'
        WHERE name = 'alerts-live-expiring'`,
    );
    await lane.waitFor(
      `${EXPIRING} to be delivered firing`,
      () => receiver.names('firing').includes(EXPIRING),
      180_000,
    );
    expect(receiver.received.find((n) => n.alertname === EXPIRING)!.labels).toMatchObject({
      job: JOB,
      severity: 'warning',
    });
    const revokedAt = receiver.elapsed();
    await sql.query(`UPDATE api_keys SET revoked_at = now() WHERE name = 'alerts-live-expiring'`);
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
  // The key fired nothing but its alert; the slow burn may fire only now, its 30-minute window (90 s here) still
  // holding the outage: it resolves too.
  expect(receiver.names('firing', [EXPIRING, 'AnimalStoreAvailabilitySlowBurn', ...fired])).toEqual([]);
  expect(receiver.names('resolved')).toEqual([...new Set([...fired, ...receiver.names('firing')])].sort());
}

/** Behind HAProxy, the database stopped until both instances are out and the page fires, then started again. */
async function stoppedBehindBalancer(lane: Lane): Promise<void> {
  const { receiver, database } = lane;
  await lane.behindBalancer();
  receiver.begin('database stopped behind HAProxy');
  await database!.pause();
  await lane.waitForBalancer('DOWN', 'HAProxy to take both instances out');
  const outAt = Date.now();
  await lane.waitFor(
    'AnimalStoreDatabaseUnreachable to be delivered firing',
    () => receiver.names('firing').includes('AnimalStoreDatabaseUnreachable'),
    180_000,
  );
  expect(receiver.received.find((n) => n.alertname === 'AnimalStoreDatabaseUnreachable')!.labels).toMatchObject({
    job: JOB,
    severity: 'critical',
  });
  // It holds while no request reaches the instances: 15 s here is 5 minutes of the shipped rules.
  await pollUntil(
    () => receiver.names('resolved').includes('AnimalStoreDatabaseUnreachable') || Date.now() - outAt > 15_000,
    { timeoutMs: 30_000, intervalMs: 250, what: '15 s with the instances out' },
  );
  expect(receiver.names('resolved')).not.toContain('AnimalStoreDatabaseUnreachable');
  expect(await lane.balancerStates()).toEqual(['DOWN', 'DOWN']);

  receiver.begin('database back behind HAProxy');
  await database!.start();
  // Some resolved while the database was still down (their traffic gone); the page resolves now.
  await lane.waitFor(
    'AnimalStoreDatabaseUnreachable, and every other alert, to be delivered resolved',
    () => receiver.names('resolved').includes('AnimalStoreDatabaseUnreachable') && receiver.allResolved(),
    240_000,
  );
  await lane.waitForBalancer('UP', 'HAProxy to bring both instances back');
}

/** After stoppedBehindBalancer, in the same lane and behind the same HAProxy: the database flapping for 36 s. */
async function flappingDatabase(lane: Lane): Promise<void> {
  const { receiver, database } = lane;
  receiver.begin('flapping database');
  await database!.pause();
  await lane.waitForBalancer('DOWN', 'HAProxy to take both instances out past the grace');
  const counts = { probes: 0, unready: 0, reachableRounds: 0, balancerSamples: 0, balancerUp: 0 };
  let flapping = true;
  const sample = async () => {
    while (flapping) {
      const [ready, metrics, states] = await Promise.all([
        fetch(`${lane.instances[0]!.origin}/health/ready`, { signal: AbortSignal.timeout(2_000) }).then(
          (r) => r.status,
          () => 0,
        ),
        fetch(`${lane.instances[0]!.origin}/metrics`, {
          headers: { authorization: `Bearer ${METRICS_TOKEN}` },
          signal: AbortSignal.timeout(2_000),
        }).then(
          (r) => r.text(),
          () => '',
        ),
        lane.balancerStates(),
      ]);
      counts.probes += 1;
      if (ready === 503) counts.unready += 1;
      if (/^animal_store_database_reachable 1$/m.test(metrics)) counts.reachableRounds += 1;
      counts.balancerSamples += 1;
      if (states.some((state) => state.startsWith('UP'))) counts.balancerUp += 1;
      await sleep(250);
    }
  };
  const sampling = sample();
  // The fault itself: the database running about 1 s, then stopped 2 s, for 36 s (the waits are its timing).
  const end = Date.now() + 36_000;
  while (Date.now() < end) {
    await database!.start();
    await sleep(1_000);
    await database!.pause();
    await sleep(2_000);
  }
  flapping = false;
  await sampling;
  appendFileSync(LOG, `${new Date().toISOString()} [flapping database] ${JSON.stringify(counts)}\n`);
  // The database did answer some rounds: the path flapped, it was not simply down.
  expect(counts.reachableRounds).toBeGreaterThan(0);
  expect(counts.unready / counts.probes).toBeGreaterThanOrEqual(0.9);
  expect(counts.balancerUp).toBe(0);

  receiver.begin('flapping over');
  await database!.start();
  await lane.waitForBalancer('UP', 'HAProxy to bring both instances back once the database holds');
  await lane.resolvedWithoutBalancer();
}

/** Every PostgreSQL process of the lane stopped 2 s in every 6 s, for 36 s, behind HAProxy. */
async function databaseStalling(lane: Lane): Promise<void> {
  await lane.behindBalancer();
  lane.receiver.begin('database stalling');
  // The fault: every PostgreSQL process stopped 2 s, then running 4 s, for 36 s (the waits are its timing).
  const stalls = (async () => {
    const end = Date.now() + 36_000;
    try {
      while (Date.now() < end) {
        await lane.signalPostgres('SIGSTOP');
        await sleep(2_000);
        await lane.signalPostgres('SIGCONT');
        await sleep(4_000);
      }
    } finally {
      await lane.signalPostgres('SIGCONT');
    }
  })();
  const counts = await lane.throughBalancer(stalls);
  appendFileSync(LOG, `${new Date().toISOString()} [database stalling] ${JSON.stringify(counts)}\n`);
  expect(counts.requests).toBeGreaterThan(0);
  expect(counts.answered2xx / counts.requests).toBeGreaterThanOrEqual(0.9);
  expect(counts.out).toEqual({ a: 0, b: 0 });

  lane.receiver.begin('stalls over');
  await lane.resolvedWithoutBalancer();
}

/** Instance 0's own path to the database cut, behind HAProxy, while instance 1's holds. */
async function oneInstanceCutOff(lane: Lane): Promise<void> {
  await lane.behindBalancer();
  lane.receiver.begin('one instance cut off');
  lane.path0!.blackHole();
  try {
    await pollUntil(async () => (await lane.balancer!.states()).strict.a === 'DOWN', {
      timeoutMs: 90_000,
      intervalMs: 250,
      what: 'HAProxy to take the cut-off instance out',
    });
    // With it out: 10 s of requests through HAProxy, answered by the peer.
    const counts = await lane.throughBalancer(sleep(10_000));
    appendFileSync(LOG, `${new Date().toISOString()} [one instance cut off] ${JSON.stringify(counts)}\n`);
    expect(counts.requests).toBeGreaterThan(0);
    expect(counts.answered2xx).toBe(counts.requests);
    expect(counts.out).toEqual({ a: counts.samples, b: 0 });
  } finally {
    lane.path0!.forward();
  }
  await lane.waitForBalancer('UP', 'HAProxy to bring the instance back once its path is restored');
  lane.receiver.begin('path restored');
  await lane.resolvedWithoutBalancer();
}

/** One instance killed, then both, then both started again. */
async function instancesKilled(lane: Lane): Promise<void> {
  const { receiver, ports } = lane;
  receiver.begin('one instance killed');
  await lane.killInstance(0);
  await lane.waitFor(
    'AnimalStoreInstanceDown to be delivered firing',
    () => receiver.names('firing').includes('AnimalStoreInstanceDown'),
    180_000,
  );
  expect(receiver.names('firing')).toEqual(['AnimalStoreInstanceDown']);
  expect(receiver.received[0].labels).toMatchObject({ instance: `127.0.0.1:${ports[0]}`, severity: 'warning' });

  receiver.begin('both instances killed');
  await lane.killInstance(1);
  await lane.waitFor(
    'AnimalStoreDown, and AnimalStoreInstanceDown for the second instance, to be delivered firing',
    () =>
      receiver.names('firing').includes('AnimalStoreDown') &&
      receiver.instances('firing', 'AnimalStoreInstanceDown').includes(`127.0.0.1:${ports[1]}`),
    180_000,
  );
  expect(receiver.names('firing')).toEqual(['AnimalStoreDown', 'AnimalStoreInstanceDown']);
  expect(receiver.received.find((n) => n.alertname === 'AnimalStoreDown')!.labels).toMatchObject({
    job: JOB,
    severity: 'critical',
  });

  receiver.begin('both instances started again');
  await lane.startInstance(0);
  await lane.startInstance(1);
  await lane.waitFor(
    'AnimalStoreDown and AnimalStoreInstanceDown to be delivered resolved',
    () =>
      ['AnimalStoreDown', 'AnimalStoreInstanceDown'].every((name) => receiver.names('resolved').includes(name)) &&
      receiver.allResolved(),
    180_000,
  );
  expect(receiver.names('firing')).toEqual([]);
  expect(receiver.names('resolved')).toEqual(['AnimalStoreDown', 'AnimalStoreInstanceDown']);
}

/**
 * The lanes and the scenarios each runs in turn. A lane's longest wait is the slow burn resolving (its 30-minute
 * window): the outage and the flapping database, which fire it, are in different lanes. The stalls, which measure
 * HAProxy's checks against a 2 s pause, come last, once the flapping database's restarts are over.
 */
const LANES: Record<string, ((lane: Lane) => Promise<void>)[]> = {
  a: [healthyMinute, oneInstanceCutOff, instancesKilled],
  b: [outageUnderTraffic, databaseStalling],
  c: [stoppedBehindBalancer, flappingDatabase],
};

describe('alerts against a live Prometheus and Alertmanager', () => {
  let scratch: string | undefined;
  let webhook: Webhook | undefined;
  let alertmanager: ReturnType<typeof daemon> | undefined;
  const lanes = Object.entries(LANES).map(([name, scenarios]) => new Lane(name, scenarios));
  /** Each scenario's outcome, which its test awaits; the lanes run them from the end of beforeAll. */
  const outcomes = new Map<(lane: Lane) => Promise<void>, Promise<void>>();
  const outcome = (scenario: (lane: Lane) => Promise<void>) => () =>
    outcomes.get(scenario) ?? Promise.reject(new Error('the lanes did not start'));

  beforeAll(async () => {
    mkdirSync(join(ROOT, 'test', 'artifacts'), { recursive: true });
    await writeFile(LOG, '');
    await ensureBuilt();
    scratch = await mkdtemp(join(tmpdir(), 'animal-store-alerts-'));
    await chmod(scratch, 0o755);

    webhook = new Webhook(await freePort());
    for (const lane of lanes) webhook.lanes.set(lane.name, lane.receiver);
    await webhook.listen();

    const alertmanagerPort = await freePort();
    await writeFile(
      join(scratch, 'alertmanager.yml'),
      stringify({
        route: {
          receiver: 'test',
          // Every alert on its own, delivered at once and again as soon as it changes.
          group_by: ['...'],
          group_wait: '1s',
          group_interval: '1s',
          repeat_interval: '1h',
        },
        receivers: [
          {
            name: 'test',
            webhook_configs: [{ url: `http://127.0.0.1:${webhook.port}/`, send_resolved: true }],
          },
        ],
      }),
    );
    const manager = daemon('prometheus-alertmanager', [
      `--config.file=${join(scratch, 'alertmanager.yml')}`,
      `--storage.path=${join(scratch, 'alertmanager')}`,
      `--web.listen-address=127.0.0.1:${alertmanagerPort}`,
      // A single Alertmanager: no cluster port.
      '--cluster.listen-address=',
    ]);
    alertmanager = manager;
    await pollUntil(async () => (await fetch(`http://127.0.0.1:${alertmanagerPort}/-/ready`)).ok, {
      timeoutMs: 30_000,
      what: 'Alertmanager to be ready',
    }).catch((error: Error) => Promise.reject(new Error(`${error.message}\n${manager.output()}`)));

    await writeFile(join(scratch, 'animal-store.rules.yaml'), shortenedRules());
    await writeFile(join(scratch, 'metrics-token'), METRICS_TOKEN);
    const dir = scratch;
    await Promise.all(lanes.map((lane) => lane.start(dir, alertmanagerPort)));

    // Every lane up before any traffic: one lane's start would slow another's first requests past the latency SLO.
    for (const lane of lanes) lane.run(outcomes);
  }, 600_000);

  afterAll(async () => {
    // A scenario still running (its test timed out) gets a bounded while to end before its lane is taken down.
    await Promise.race([Promise.allSettled(outcomes.values()), sleep(30_000)]);
    await Promise.all(lanes.map((lane) => lane.stop()));
    await stopChild(alertmanager?.child);
    await webhook?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }, 120_000);

  it('a healthy minute of mixed traffic delivers nothing', outcome(healthyMinute), 600_000);

  it(
    'an outage under traffic: the fast-burn page, the unreachable database, its faults and readiness; all resolve, and meanwhile a year-long key in its last 3 days fires AnimalStoreApiKeysExpiringSoon until it is revoked',
    outcome(outageUnderTraffic),
    600_000,
  );

  it(
    'behind HAProxy, the database stopped: the instances are taken out, and with no request reaching them AnimalStoreDatabaseUnreachable pages; resolved once it is back',
    outcome(stoppedBehindBalancer),
    600_000,
  );

  it(
    'a flapping database after the grace: readiness answers 503 to at least 90% of probes and HAProxy keeps the instances out',
    outcome(flappingDatabase),
    600_000,
  );

  it(
    'the whole database stalling 2 s in every 6 s: through HAProxy at least 90% of requests answer 2xx and neither instance is taken out',
    outcome(databaseStalling),
    600_000,
  );

  it(
    'one instance cut off from the database while its peer is not: that one is taken out, its peer stays in and serves',
    outcome(oneInstanceCutOff),
    600_000,
  );

  it(
    'one instance killed: AnimalStoreInstanceDown; both: AnimalStoreDown; both back: all resolve',
    outcome(instancesKilled),
    600_000,
  );
});

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { PROMETHEUS_RULE_FILE, prometheusRule } from '../dev/prometheus-rule.js';
import { ROOT } from './support/built-service.js';
import { ProductionService, startProductionService } from './support/production-service.js';
import { ServiceProcess } from './support/service-process.js';

const METRICS_TOKEN = 'alert-rules-metrics-token-0123456789';
const RULES = join(ROOT, 'k8s', 'alerts', 'animal-store.rules.yaml');

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
const rules = (parse(readFileSync(RULES, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap(
  (group) => group.rules,
);
const alerts = rules.filter((rule) => rule.alert !== undefined);
/** Series from elsewhere: Prometheus, the backups' textfile, node_exporter, kube-state-metrics, the recording rules. */
const EXTERNAL = [
  'up',
  'animal_store_backup_last_success_timestamp_seconds',
  'animal_store_backup_failures_total',
  'kube_job_status_failed',
  'kube_job_status_succeeded',
  'kube_job_owner',
  'kube_cronjob_status_last_successful_time',
  'kube_cronjob_created',
  'kube_cronjob_info',
  'node_textfile_mtime_seconds',
  ...rules.flatMap((rule) => (rule.record ? [rule.record] : [])),
];

const KEYWORDS = new Set('and or unless by without on ignoring group_left group_right bool offset'.split(' '));

/** The metric names a PromQL expression selects: what is left once strings, matchers, ranges, groupings and calls are removed. */
function metricNames(expr: string): string[] {
  const selectors = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = [...selectors.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)]
    .filter(([, name, call]) => call === undefined && !KEYWORDS.has(name))
    .map(([, name]) => name);
  return [...new Set(names)].sort();
}

/** Every series name a Prometheus text exposition can hold: its samples, and the ones each TYPE line promises. */
function servedNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name);
    if (type === 'histogram' || type === 'summary') ['_sum', '_count'].forEach((suffix) => names.add(name + suffix));
    if (type === 'histogram') names.add(`${name}_bucket`);
  }
  for (const [, name] of exposition.matchAll(/^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]/gm)) names.add(name);
  return names;
}

describe('alert rules (k8s/alerts/animal-store.rules.yaml)', () => {
  let running: ProductionService;
  let service: ServiceProcess;

  beforeAll(async () => {
    running = await startProductionService({
      API_KEYS: 'alert-rules-key-0123456789abcdef',
      CURSOR_SECRET: 'alert-rules-cursor-secret-0123456789',
      METRICS_TOKEN,
    });
    ({ service } = running);
  }, 300_000);

  afterAll(() => running?.close(), 60_000);

  it('finds the metric names in an expression', () => {
    expect(
      metricNames(
        'histogram_quantile(0.99, sum by (job, le) (rate(a_bucket{route=~"/v1/.*"}[5m]))) > 0.5 unless on (job) b_total == 1',
      ),
    ).toEqual(['a_bucket', 'b_total']);
  });

  it('use only metrics that a running instance serves on /metrics, with the route labels they select', async () => {
    expect((await fetch(`${service.origin}/health/ready`)).status).toBe(200);
    // Production serves it as development does once METRICS_TOKEN is set, to that token only.
    expect((await fetch(`${service.origin}/metrics`)).status).toBe(401);
    const response = await fetch(`${service.origin}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    expect(response.status).toBe(200);
    const exposition = await response.text();
    // AnimalStoreNotReady selects the readiness probe's answers by this route label.
    expect(exposition).toMatch(
      /^http_request_duration_seconds_count\{method="GET",route="\/health\/ready",status="200"\} \d+$/m,
    );
    // Readiness rounds set it on each scrape, with no probe needed.
    expect(exposition).toMatch(/^animal_store_database_reachable 1$/m);
    const served = new Set([...servedNames(exposition), ...EXTERNAL]);
    const used = rules.map((rule) => ({ alert: rule.alert ?? rule.record, names: metricNames(rule.expr) }));
    // The objectives and the docs' address are constants (`vector(0.999)`); every other rule reads series.
    expect(used.filter(({ names }) => names.length === 0).map(({ alert }) => alert)).toEqual([
      'animal_store:docs:info',
      'animal_store:slo_availability_objective:ratio',
      'animal_store:slo_latency_objective:ratio',
    ]);
    expect(used.map(({ alert, names }) => ({ alert, missing: names.filter((name) => !served.has(name)) }))).toEqual(
      used.map(({ alert }) => ({ alert, missing: [] })),
    );
  });

  it('ship in the Prometheus Operator form generated from the one rules file, with the same groups', () => {
    const operatorForm = readFileSync(PROMETHEUS_RULE_FILE, 'utf8');
    // On a difference: `npm run alerts:prometheusrule` writes it again from animal-store.rules.yaml.
    expect(operatorForm).toBe(prometheusRule());
    const resource = parse(operatorForm) as { apiVersion: string; kind: string; spec: unknown };
    expect(resource).toMatchObject({ apiVersion: 'monitoring.coreos.com/v1', kind: 'PrometheusRule' });
    expect(resource.spec).toEqual(parse(readFileSync(RULES, 'utf8')));
  });

  it('each have a for:, a severity, a summary, a description and an absolute runbook link from the one docs setting', () => {
    expect(alerts).toHaveLength(27);
    const docs = rules.find((rule) => rule.record === 'animal_store:docs:info');
    expect(docs?.expr).toMatch(/^label_replace\(vector\(1\), "url", "https:\/\/[^"]+", "", ""\)$/);
    for (const rule of alerts) {
      expect({ alert: rule.alert, for: rule.for, severity: rule.labels?.severity }).toEqual({
        alert: rule.alert,
        for: expect.stringMatching(/^\d+[mh]$/) as unknown,
        severity: expect.stringMatching(/^(critical|warning|info)$/) as unknown,
      });
      expect(Object.keys(rule.annotations ?? {})).toEqual(['summary', 'description', 'runbook_url']);
      // promtool's tests render it: here, that every alert builds it the same way, from that rule's `url` label.
      expect({ alert: rule.alert, runbook: rule.annotations?.runbook_url }).toEqual({
        alert: rule.alert,
        runbook: expect.stringMatching(
          /^\{\{ with query "animal_store:docs:info" \}\}\{\{ \. \| first \| label "url" \}\}\{\{ end \}\}\/operating\.md#[a-z-]+$/,
        ) as unknown,
      });
    }
  });
});

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../src/config/package-root.js';

/** The one rules file: what Prometheus loads with `rule_files`, and what the PrometheusRule is made from. */
export const RULES_FILE = join(PACKAGE_ROOT, 'k8s', 'alerts', 'animal-store.rules.yaml');
/** The Prometheus Operator's form of the same rules, never edited by hand. */
export const PROMETHEUS_RULE_FILE = join(PACKAGE_ROOT, 'k8s', 'alerts', 'animal-store.prometheusrule.yaml');

const HEADER = `# Generated from animal-store.rules.yaml by \`npm run alerts:prometheusrule\`: edit that file, then run it again
# (test/alert-rules.e2e-spec.ts fails while the two differ). For the Prometheus Operator: \`kubectl apply -f\` this file
# in the namespace its Prometheus watches, and give it the labels that Prometheus' ruleSelector asks for.
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: animal-store
  labels:
    app.kubernetes.io/name: animal-store
spec:
`;

/**
 * The PrometheusRule whose `spec` is the rules file's `groups`, copied line by line (comments included) and indented
 * under `spec:`: the same rules, byte for byte, with no YAML round trip to reformat their expressions.
 */
export function prometheusRule(rules = readFileSync(RULES_FILE, 'utf8')): string {
  const start = rules.search(/^groups:/m);
  if (start < 0) throw new Error(`${RULES_FILE} has no top-level "groups:" to copy into a PrometheusRule`);
  const body = rules
    .slice(start)
    .split('\n')
    .map((line) => (line === '' ? line : `  ${line}`))
    .join('\n');
  return HEADER + body;
}

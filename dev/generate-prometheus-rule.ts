import { writeFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { PROMETHEUS_RULE_FILE, prometheusRule, RULES_FILE } from './prometheus-rule.js';

/** `npm run alerts:prometheusrule`: writes k8s/alerts/animal-store.prometheusrule.yaml from the rules file. */
await writeFile(PROMETHEUS_RULE_FILE, prometheusRule());
process.stdout.write(
  `Wrote ${relative(process.cwd(), PROMETHEUS_RULE_FILE)} from ${relative(process.cwd(), RULES_FILE)}\n`,
);

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ROOT, run } from '../support/built-service.js';

const ALERTS = join(ROOT, 'k8s', 'alerts');
/** Every recording and alerting rule in the file (test/alert-rules.e2e-spec.ts pins how many alerts). */
const RULES = (
  parse(readFileSync(join(ALERTS, 'animal-store.rules.yaml'), 'utf8')) as { groups: { rules: unknown[] }[] }
).groups.flatMap((group) => group.rules).length;

/**
 * Prometheus' own checks of k8s/alerts/ (promtool and amtool, from Debian's prometheus and prometheus-alertmanager
 * packages): the rules parse, each alert fires as its unit tests say, and the example Alertmanager configuration is
 * valid. test/system/alerts-live.system-spec.ts watches them fire against the running service.
 */
describe('alert rules under promtool', () => {
  it('pass `promtool check rules`', async () => {
    const checked = await run('promtool', ['check', 'rules', 'animal-store.rules.yaml'], process.env, 60_000, {
      cwd: ALERTS,
    });
    expect(checked).toMatchObject({
      code: 0,
      stdout: expect.stringContaining(`SUCCESS: ${RULES} rules found`) as unknown,
    });
  });

  // One run per file, each within the time limit, which guards against a hang: the days file alone takes most of it.
  it.each(['animal-store.rules.test.yaml', 'animal-store.outages.test.yaml', 'animal-store.days.test.yaml'])(
    'pass their unit tests, `promtool test rules %s`',
    async (file) => {
      const tested = await run('promtool', ['test', 'rules', file], process.env, 120_000, { cwd: ALERTS });
      expect(tested).toMatchObject({ code: 0 });
      expect(tested.stdout.match(/^\s*SUCCESS$/gm)).toHaveLength(1);
    },
    150_000,
  );

  it('ship an example alertmanager.yml that passes `amtool check-config`', async () => {
    const checked = await run('amtool', ['check-config', 'alertmanager.yml'], process.env, 60_000, { cwd: ALERTS });
    expect(checked).toMatchObject({ code: 0, stdout: expect.stringContaining('SUCCESS') as unknown });
    expect(checked.stdout).toContain('3 receivers');
  });
});

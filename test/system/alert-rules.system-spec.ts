import { readdirSync, readFileSync } from 'node:fs';
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

  // Every unit-test file at once (promtool runs one on a single core), each within the time limit, which guards
  // against a hang.
  it('pass their unit tests, `promtool test rules` on each *.test.yaml', async () => {
    const files = readdirSync(ALERTS).filter((file) => file.endsWith('.test.yaml'));
    const results = await Promise.all(
      files.map(async (file) => {
        const tested = await run('promtool', ['test', 'rules', file], process.env, 120_000, { cwd: ALERTS });
        const successes = tested.stdout.match(/^\s*SUCCESS$/gm)?.length ?? 0;
        // promtool's own account of a failing test, shown by the comparison below.
        const failed = tested.code === 0 ? undefined : `${tested.stdout}${tested.stderr}`;
        return { file, code: tested.code, successes, failed };
      }),
    );
    expect(files.length).toBeGreaterThanOrEqual(4);
    expect(results).toEqual(files.map((file) => ({ file, code: 0, successes: 1 })));
  }, 150_000);

  it('ship an example alertmanager.yml that passes `amtool check-config`', async () => {
    const checked = await run('amtool', ['check-config', 'alertmanager.yml'], process.env, 60_000, { cwd: ALERTS });
    expect(checked).toMatchObject({ code: 0, stdout: expect.stringContaining('SUCCESS') as unknown });
    expect(checked.stdout).toContain('3 receivers');
  });
});

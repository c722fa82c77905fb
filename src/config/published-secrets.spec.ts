import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { UNUSED_DATABASE_URL } from '../../test/support/config.js';
import { commaList, loadConfig, loadDatabaseConfig } from './app-config.js';
import { ConfigError } from './problem.js';
import { PUBLISHED_EXAMPLE_SECRETS, SECRET_VARIABLES } from './published-secrets.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NAMES = Object.keys(SECRET_VARIABLES) as (keyof typeof SECRET_VARIABLES)[];
const OWN_CURSOR_SECRET = 'a-cursor-secret-of-our-own-0123456789';

/** What the repository publishes: .env.example, the compose files (and the services they share) and the Kubernetes manifests. */
const PUBLISHED_FILES = [
  '.env.example',
  ...readdirSync(ROOT).filter((file) => /^docker-compose.*\.ya?ml$/.test(file)),
  ...readdirSync(join(ROOT, 'compose'))
    .filter((file) => /\.ya?ml$/.test(file))
    .map((file) => join('compose', file)),
  ...readdirSync(join(ROOT, 'k8s'), { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.ya?ml$/.test(file))
    .map((file) => join('k8s', file)),
];

/**
 * Every value a published file gives a secret variable: `NAME=value` (commented or not), `NAME: value` in YAML, and
 * the default of `${NAME:-value}` wherever it appears (a value that is itself a `$…` expansion is no example). API_KEYS is split as the service splits it.
 */
function exampleValues(): { file: string; name: string; value: string }[] {
  const found: { file: string; name: string; value: string }[] = [];
  for (const file of PUBLISHED_FILES) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const name of NAMES) {
      const assigned = [...text.matchAll(new RegExp(`^[\\s#-]*${name}\\s*[:=][ \\t]*(.*)$`, 'gm'))].map((m) => m[1]);
      const defaults = [...text.matchAll(new RegExp(`\\$\\{${name}:?-([^}]*)\\}`, 'g'))].map((m) => m[1]);
      const values = [...assigned, ...defaults]
        .filter((value) => !value.startsWith('$'))
        .map((value) => value.trim().replace(/^(['"])(.*)\1$/, '$2'))
        .flatMap((value) => (name === 'API_KEYS' ? commaList(value) : [value]))
        .filter((value) => value !== '');
      found.push(...values.map((value) => ({ file, name, value })));
    }
  }
  return found;
}

function refusal(load: () => unknown): string {
  try {
    load();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message;
  }
  return 'accepted';
}

describe('published example secrets', () => {
  const examples = exampleValues();

  it('are all in the list: every value the published files give API_KEYS, CURSOR_SECRET or METRICS_TOKEN', () => {
    // The files do publish examples (k8s/secret.yaml's placeholders at least): the scan finds them.
    expect(examples.map(({ file }) => file)).toContain(join('k8s', 'secret.yaml'));
    expect(examples.filter(({ value }) => !PUBLISHED_EXAMPLE_SECRETS.has(value))).toEqual([]);
  });

  it('are refused with NODE_ENV=production by the service and by the commands, naming the variable', () => {
    for (const value of PUBLISHED_EXAMPLE_SECRETS) {
      for (const name of NAMES) {
        const env = { NODE_ENV: 'production', CURSOR_SECRET: OWN_CURSOR_SECRET, [name]: value };
        const expected = `${name === 'API_KEYS' ? 'API_KEYS entry 1' : name} is an example value published with this service, refused when NODE_ENV=production: ${SECRET_VARIABLES[name]}`;
        expect({ name, value, service: refusal(() => loadConfig(env)) }).toEqual({ name, value, service: expected });
        expect({ name, value, commands: refusal(() => loadDatabaseConfig(env)) }).toEqual({
          name,
          value,
          commands: expected,
        });
      }
    }
  });

  it('are refused as any entry of API_KEYS, named or not, named by its position and never shown', () => {
    const [example] = PUBLISHED_EXAMPLE_SECRETS;
    const message = refusal(() =>
      loadConfig({
        NODE_ENV: 'production',
        CURSOR_SECRET: OWN_CURSOR_SECRET,
        API_KEYS: `own-key-0123456789abcdef, ,ci:${example}`,
      }),
    );
    expect(message).toMatch(/^API_KEYS entry 2 is an example value/);
    expect(message).not.toContain(example);
  });

  it('still work outside production, where they guard nothing', () => {
    const [example] = PUBLISHED_EXAMPLE_SECRETS;
    expect(loadConfig({ DATABASE_URL: UNUSED_DATABASE_URL, API_KEYS: example }).apiKeys.map(({ key }) => key)).toEqual([
      example,
    ]);
  });

  it('are commented out in .env.example, as every secret there is', () => {
    const uncommented = readFileSync(join(ROOT, '.env.example'), 'utf8')
      .split('\n')
      .filter((line) => /^\s*\w*(SECRET|TOKEN|PASSWORD|API_KEYS|DATABASE_URL)\w*\s*=/.test(line));
    expect(uncommented).toEqual([]);
  });
});

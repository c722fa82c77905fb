/**
 * Secret values this repository publishes as examples (in .env.example, docker-compose*.yml and k8s/, now or
 * before): anyone can read them, so with NODE_ENV=production no entry point starts with one.
 * src/config/published-secrets.spec.ts reads those files, so that this list and they cannot drift apart.
 */
export const PUBLISHED_EXAMPLE_SECRETS: ReadonlySet<string> = new Set([
  'replace-with-a-long-random-key',
  'replace-with-32-or-more-random-characters',
  'replace-with-a-long-random-metrics-token',
  'example-cursor-secret-change-me-please',
]);

/** The variables that hold secrets, and what to do instead of using an example. */
export const SECRET_VARIABLES = {
  API_KEYS:
    'issue keys with `npm run apikey -- create <name>` and leave API_KEYS unset, or set keys of your own (e.g. `openssl rand -base64 32`)',
  CURSOR_SECRET: 'set a random value of your own (e.g. `openssl rand -base64 32`), the same on every instance',
  METRICS_TOKEN: 'set a random token of your own (e.g. `openssl rand -base64 32`) and give it to your scraper',
} as const;

/**
 * One line naming the first secret variable of `env` that holds a published example, and what to do; null when
 * none does. The value itself is never repeated. API_KEYS is a comma-separated list: each entry is checked.
 */
export function publishedSecretProblem(env: Record<string, unknown>): string | null {
  for (const [name, instead] of Object.entries(SECRET_VARIABLES)) {
    const value = env[name];
    if (typeof value !== 'string') continue;
    // Numbered as the API_KEYS rule numbers them: trimmed, empty entries dropped.
    const entries = (name === 'API_KEYS' ? value.split(',') : [value]).map((entry) => entry.trim()).filter(Boolean);
    const index = entries.findIndex((entry) => PUBLISHED_EXAMPLE_SECRETS.has(entry));
    if (index === -1) continue;
    const variable = name === 'API_KEYS' ? `API_KEYS entry ${index + 1}` : name;
    return `${variable} is an example value published with this service, refused when NODE_ENV=production: ${instead}`;
  }
  return null;
}

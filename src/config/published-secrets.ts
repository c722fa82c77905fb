/**
 * Secret values this repository publishes as examples (in .env.example, docker-compose*.yml and k8s/, now or
 * before): anyone can read them, so with NODE_ENV=production no entry point starts with one (src/config/environment.ts).
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

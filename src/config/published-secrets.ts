/** Secrets published as examples (.env.example, compose files, k8s/): refused in production; its spec scans them. */
export const PUBLISHED_EXAMPLE_SECRETS: ReadonlySet<string> = new Set([
  'replace-with-a-long-random-key',
  'replace-with-32-or-more-random-characters',
  'replace-with-a-long-random-metrics-token',
  'example-cursor-secret-change-me-please',
]);

/** The variables holding secrets, and what to do instead of using an example. */
export const SECRET_VARIABLES = {
  API_KEYS:
    'issue keys with `npm run apikey -- create <name>` and leave API_KEYS unset, or set keys of your own (e.g. `openssl rand -base64 32`)',
  CURSOR_SECRET: 'set a random value of your own (e.g. `openssl rand -base64 32`), the same on every instance',
  METRICS_TOKEN: 'set a random token of your own (e.g. `openssl rand -base64 32`) and give it to your scraper',
} as const;

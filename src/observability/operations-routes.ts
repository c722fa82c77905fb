/** Routes for operators and their tooling, served outside the versioned API (and outside its OpenAPI document). */
export const OPERATIONS_ROUTES = { live: 'health/live', ready: 'health/ready', metrics: 'metrics' } as const;

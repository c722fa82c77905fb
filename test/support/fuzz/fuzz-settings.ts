import type { Parameters } from 'fast-check';

const DEFAULT_RUNS = 25;

function positiveInteger(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0)
    throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return value;
}

/**
 * How many cases each property runs and from which seed: a fixed count in CI,
 * more with FUZZ_RUNS=…, and a failing run replayed exactly with FUZZ_SEED=….
 * The seed is printed so that any run can be replayed.
 */
export function fuzzSettings(suite: string): { runs: number; seed: number; parameters<T>(): Parameters<T> } {
  const runs = positiveInteger('FUZZ_RUNS', DEFAULT_RUNS);
  const seed = positiveInteger('FUZZ_SEED', Date.now() % 2 ** 31);
  console.info(`${suite}: FUZZ_RUNS=${runs} FUZZ_SEED=${seed} (replay with these variables)`);
  return { runs, seed, parameters: () => ({ numRuns: runs, seed, endOnFailure: true }) };
}

import { Problem } from '../config/problem.js';

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** At most ten years: past that a duration is a typo, and PostgreSQL's timestamps would still hold it. */
export function parseDuration(option: string, text: string): number | Problem {
  const match = /^([1-9]\d{0,5})([smhd])$/.exec(text);
  const ms = match ? Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS] : NaN;
  if (ms <= 3_650 * UNIT_MS.d) return ms;
  return new Problem(
    `Invalid duration "${text}" for ${option}: use a whole number above 0 followed by s, m, h or d (e.g. 90d, 12h, 10s), at most 3650d.`,
  );
}

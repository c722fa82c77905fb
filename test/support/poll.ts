/** What a probe answers before it is satisfied: nothing, or a falsy value. */
type OrFalsy<T> = T | undefined | null | false;

/** Calls `probe` until it returns something truthy, every `intervalMs`, for at most `timeoutMs`. */
export async function pollUntil<T>(
  probe: () => OrFalsy<T> | Promise<OrFalsy<T>>,
  { timeoutMs = 15_000, intervalMs = 100, what = 'condition' } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  const cause = lastError instanceof Error ? lastError.toString() : JSON.stringify(lastError);
  throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${cause}` : ''}`);
}

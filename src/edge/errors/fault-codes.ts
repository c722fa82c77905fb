// The Error code of each 5xx answer, by its raw response, for the request's SERVER span (start-tracing.ts reads it).
const faultCodes = new WeakMap<object, string>();

export function noteFaultCode(response: object, status: number, code: string): void {
  if (status >= 500) faultCodes.set(response, code);
}

export const faultCodeOf = (response: object): string | undefined => faultCodes.get(response);

import { PetStatus } from './pet-status.enum.js';

/**
 * The RFC 8288 `Link` header value pointing at the next page: the same
 * `limit` and `status`, plus the cursor. The target is a path-absolute
 * reference, resolved against the request URL, so the header never repeats a
 * client-supplied Host. Status values and cursors are url-safe as they are.
 */
export function nextPageLink(path: string, limit: number, status: PetStatus | undefined, cursor: string): string {
  const filter = status === undefined ? '' : `&status=${status}`;
  return `<${path}?limit=${limit}${filter}&cursor=${cursor}>; rel="next"`;
}

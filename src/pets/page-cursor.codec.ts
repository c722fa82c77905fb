import { createHmac, createSecretKey, KeyObject, timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { MAX_ID, MIN_ID } from './pet-id.js';
import { PetStatus } from './pet-status.enum.js';

/** Where the next page starts: after the last id seen, within the same status filter. */
type PageCursor = { after: number; status?: PetStatus };

// Layout: version (1 byte), status filter (1), last id (8, big-endian), truncated HMAC-SHA256 of the first 10 bytes
// (14). 24 bytes are exactly 32 base64url characters: no padding bits let two strings decode to the same bytes.
const VERSION = 1;
const PAYLOAD_BYTES = 10;
const TAG_BYTES = 14;
const CURSOR_BYTES = PAYLOAD_BYTES + TAG_BYTES;
export const CURSOR_LENGTH = (CURSOR_BYTES / 3) * 4;
const CURSOR_REGEX = new RegExp(`^[A-Za-z0-9_-]{${CURSOR_LENGTH}}$`);

// Explicit codes (the index; 0 is "no status filter"), so reordering the enum never changes an issued cursor.
const STATUS_BY_CODE = [undefined, PetStatus.Available, PetStatus.Pending, PetStatus.Sold] as const;

const ISSUED_PER_FILTER = 1_024;

/** A page position as the opaque `cursor` clients send back, signed: anything else decodes to `undefined`. */
export class PageCursorCodec {
  private readonly key: KeyObject;
  /** Issued cursors by status code, then by last id: the same pages are listed over and over (docs/performance.md). */
  private readonly issued = STATUS_BY_CODE.map(
    (_status, code) =>
      new LRUCache<number, string>({ max: ISSUED_PER_FILTER, memoMethod: (after) => this.sign(code, after) }),
  );

  constructor(secret: string | Buffer) {
    this.key = createSecretKey(typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret);
  }

  encode({ after, status }: PageCursor): string {
    return this.issued[STATUS_BY_CODE.indexOf(status)].memo(after);
  }

  decode(cursor: string): PageCursor | undefined {
    // Buffer.from(…, 'base64url') skips characters it does not know, so the alphabet is checked first.
    if (cursor.length !== CURSOR_LENGTH || !CURSOR_REGEX.test(cursor)) return undefined;
    const bytes = Buffer.from(cursor, 'base64url');
    if (!timingSafeEqual(this.tag(bytes).subarray(0, TAG_BYTES), bytes.subarray(PAYLOAD_BYTES))) return undefined;
    if (bytes[0] !== VERSION || bytes[1] >= STATUS_BY_CODE.length) return undefined;
    const after = Number(bytes.readBigUInt64BE(2));
    if (after < MIN_ID || after > MAX_ID) return undefined;
    const status = STATUS_BY_CODE[bytes[1]];
    return status === undefined ? { after } : { after, status };
  }

  private sign(statusCode: number, after: number): string {
    const bytes = Buffer.allocUnsafe(CURSOR_BYTES);
    bytes[0] = VERSION;
    bytes[1] = statusCode;
    bytes.writeBigUInt64BE(BigInt(after), 2);
    this.tag(bytes).copy(bytes, PAYLOAD_BYTES, 0, TAG_BYTES);
    return bytes.toString('base64url');
  }

  private tag(bytes: Buffer): Buffer {
    return createHmac('sha256', this.key).update(bytes.subarray(0, PAYLOAD_BYTES)).digest();
  }
}

import { createHmac, randomBytes } from 'node:crypto';
import { MAX_ID } from './pet-id.js';
import { CURSOR_LENGTH, PageCursorCodec } from './page-cursor.codec.js';
import { PetStatus } from './pet-status.enum.js';

const SECRET = 'unit-test-cursor-secret-0123456789abcdef';

/** Re-encodes the cursor's bytes after `edit`, so only the signature can tell. */
function editBytes(cursor: string, edit: (bytes: Buffer) => void): string {
  const bytes = Buffer.from(cursor, 'base64url');
  edit(bytes);
  return bytes.toString('base64url');
}

/** A correctly signed cursor around any payload: version, status code, id as two uint32. */
function signed(version: number, statusCode: number, high: number, low: number): string {
  const payload = Buffer.alloc(10);
  payload[0] = version;
  payload[1] = statusCode;
  payload.writeUInt32BE(high, 2);
  payload.writeUInt32BE(low, 6);
  const tag = createHmac('sha256', SECRET).update(payload).digest().subarray(0, 14);
  return Buffer.concat([payload, tag]).toString('base64url');
}

describe('PageCursorCodec', () => {
  const codec = new PageCursorCodec(SECRET);

  it.each([
    { after: 1 },
    { after: 7, status: PetStatus.Available },
    { after: 2 ** 32 + 5, status: PetStatus.Pending },
    { after: MAX_ID, status: PetStatus.Sold },
  ])('decodes what it encoded: %o', (position) => {
    const cursor = codec.encode(position);
    expect(cursor).toMatch(new RegExp(`^[A-Za-z0-9_-]{${CURSOR_LENGTH}}$`));
    expect(codec.decode(cursor)).toEqual(position);
  });

  it('keeps the status filter apart from the position', () => {
    expect(codec.encode({ after: 10 })).not.toBe(codec.encode({ after: 10, status: PetStatus.Available }));
    expect(codec.decode(codec.encode({ after: 10 }))).not.toHaveProperty('status');
  });

  it('is deterministic for one secret and differs between secrets', () => {
    const other = new PageCursorCodec('another-secret-of-enough-length-0123456789');
    expect(codec.encode({ after: 42 })).toBe(new PageCursorCodec(SECRET).encode({ after: 42 }));
    expect(other.encode({ after: 42 })).not.toBe(codec.encode({ after: 42 }));
    expect(other.decode(codec.encode({ after: 42 }))).toBeUndefined();
  });

  it('gives a repeated page the cursor signing gives it, also after its memory of issued cursors filled up', () => {
    const fresh = new PageCursorCodec(SECRET);
    const first = fresh.encode({ after: 20, status: PetStatus.Available });
    for (let after = 1; after <= 3_000; after++) fresh.encode({ after, status: PetStatus.Available });

    expect(fresh.encode({ after: 20, status: PetStatus.Available })).toBe(first);
    expect(first).toBe(signed(1, 1, 0, 20));
    expect(fresh.encode({ after: 2_999, status: PetStatus.Available })).toBe(signed(1, 1, 0, 2_999));
  });

  it.each([
    ['empty', ''],
    ['garbage', 'not a cursor!'],
    ['a number', '42'],
    ['padded base64', `${'A'.repeat(CURSOR_LENGTH - 2)}==`],
    ['standard base64 alphabet', `${'A'.repeat(CURSOR_LENGTH - 1)}+`],
    ['huge', 'A'.repeat(100_000)],
  ])('rejects %s', (_name, cursor) => {
    expect(codec.decode(cursor)).toBeUndefined();
  });

  it('rejects a truncated or extended cursor', () => {
    const cursor = codec.encode({ after: 1234, status: PetStatus.Sold });
    expect(codec.decode(cursor.slice(0, -1))).toBeUndefined();
    expect(codec.decode(cursor.slice(0, -4))).toBeUndefined();
    expect(codec.decode(`${cursor}A`)).toBeUndefined();
    expect(codec.decode(`${cursor}${cursor}`)).toBeUndefined();
  });

  it('rejects random bytes of the right length', () => {
    for (let i = 0; i < 200; i += 1) {
      expect(codec.decode(randomBytes(24).toString('base64url'))).toBeUndefined();
    }
  });

  it('rejects every single-byte change', () => {
    const cursor = codec.encode({ after: 987_654, status: PetStatus.Available });
    for (let index = 0; index < 24; index += 1) {
      expect(codec.decode(editBytes(cursor, (bytes) => void (bytes[index] ^= 0x01)))).toBeUndefined();
    }
  });

  it('rejects every single-character change', () => {
    const cursor = codec.encode({ after: 555, status: PetStatus.Pending });
    for (let index = 0; index < cursor.length; index += 1) {
      const replacement = cursor[index] === 'A' ? 'B' : 'A';
      expect(codec.decode(`${cursor.slice(0, index)}${replacement}${cursor.slice(index + 1)}`)).toBeUndefined();
    }
  });

  it('rejects a cursor whose status was switched', () => {
    const cursor = codec.encode({ after: 100, status: PetStatus.Available });
    expect(codec.decode(editBytes(cursor, (bytes) => void (bytes[1] = 3)))).toBeUndefined();
    expect(codec.decode(editBytes(cursor, (bytes) => void (bytes[1] = 0)))).toBeUndefined();
  });

  it('rejects signed payloads it would never issue', () => {
    expect(codec.decode(signed(1, 1, 0, 77))).toEqual({ after: 77, status: PetStatus.Available });
    expect(codec.decode(signed(2, 1, 0, 77))).toBeUndefined();
    expect(codec.decode(signed(1, 4, 0, 77))).toBeUndefined();
    expect(codec.decode(signed(1, 0, 0, 0))).toBeUndefined();
    expect(codec.decode(signed(1, 0, 0x20_0000, 0))).toBeUndefined();
  });
});

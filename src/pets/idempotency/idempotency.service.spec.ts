import { requestFingerprint } from './idempotency.service.js';

describe('requestFingerprint', () => {
  it('ignores key order, at every depth', () => {
    expect(requestFingerprint({ name: 'Rex', categoryId: 1, nested: { b: 1, a: 2 } })).toBe(
      requestFingerprint({ nested: { a: 2, b: 1 }, categoryId: 1, name: 'Rex' }),
    );
  });

  it('tells different values, and a missing field from a present one, apart', () => {
    const base = requestFingerprint({ name: 'Rex', categoryId: 1 });
    expect(requestFingerprint({ name: 'Rex', categoryId: 2 })).not.toBe(base);
    expect(requestFingerprint({ name: 'Rex', categoryId: 1, status: 'available' })).not.toBe(base);
    expect(requestFingerprint({ name: 'Rex', categoryId: '1' })).not.toBe(base);
  });
});

import { generateApiKey, isIssuedKeyFormat, publicPrefix } from './api-key-format.js';

describe('API key format', () => {
  it('is pet_ followed by 32 base62 characters', () => {
    const key = generateApiKey();
    expect(key).toMatch(/^pet_[0-9A-Za-z]{32}$/);
    expect(isIssuedKeyFormat(key)).toBe(true);
  });

  it('never repeats across many keys', () => {
    const keys = new Set(Array.from({ length: 2_000 }, () => generateApiKey()));
    expect(keys.size).toBe(2_000);
  });

  it('uses every character of the alphabet about equally often', () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 2_000; i += 1) {
      for (const char of generateApiKey().slice(4)) counts.set(char, (counts.get(char) ?? 0) + 1);
    }
    expect(counts.size).toBe(62);
    // 64,000 characters over 62 symbols: about 1,032 each; a biased generator skews the low symbols by ~+25%.
    for (const count of counts.values()) {
      expect(count).toBeGreaterThan(850);
      expect(count).toBeLessThan(1_220);
    }
  });

  it('recognises only issued keys', () => {
    expect(isIssuedKeyFormat('pet_' + 'a'.repeat(31))).toBe(false);
    expect(isIssuedKeyFormat('pet_' + 'a'.repeat(32) + '!')).toBe(false);
    expect(isIssuedKeyFormat('key_' + 'a'.repeat(32))).toBe(false);
    expect(isIssuedKeyFormat('pet_' + '-'.repeat(32))).toBe(false);
  });

  it('shows a short public prefix', () => {
    expect(publicPrefix('pet_AbCdEfGh' + 'x'.repeat(24))).toBe('pet_AbCdEfGh');
  });
});

import { createHash } from 'node:crypto';
import { apiKeyPrefix, generateApiKey, hashApiKey } from './api-keys';

describe('API keys', () => {
  it('are hth_ and 43 url-safe characters, different every time', () => {
    const key = generateApiKey();
    expect(key).toMatch(/^hth_[A-Za-z0-9_-]{43}$/);
    expect(generateApiKey()).not.toBe(key);
    expect(apiKeyPrefix(key)).toBe(key.slice(0, 8));
  });

  it('are stored as the hex sha256 of their UTF-8 bytes', () => {
    expect(hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    for (const key of [generateApiKey(), 'hth_naïve-ключ-🔑']) {
      expect(hashApiKey(key)).toBe(createHash('sha256').update(key, 'utf8').digest('hex'));
    }
  });
});

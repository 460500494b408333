import { createHash, randomBytes } from 'node:crypto';

/** API keys are `hth_` + 43 url-safe characters (32 random bytes); only their sha256 is stored. */
export function generateApiKey(): string {
  return `hth_${randomBytes(32).toString('base64url')}`;
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export const apiKeyPrefix = (key: string) => key.slice(0, 8);

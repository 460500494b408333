import { randomBytes } from 'node:crypto';

/**
 * Opaque, time-ordered ids: `<prefix>_<10 chars of ms time><16 chars of randomness>` in Crockford
 * base32 (lower case). Sorting ids of one prefix sorts them by creation time.
 */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

export const ID_PREFIX = {
  account: 'acc',
  client: 'cli',
  apiKey: 'key',
  workspace: 'ws',
  project: 'prj',
  member: 'pmem',
  session: 'ses',
  branch: 'br',
  floor: 'flr',
  page: 'pg',
  message: 'msg',
  event: 'evt',
  operationLog: 'oplog',
  operationGroup: 'opgrp',
  job: 'job',
  derivedOutput: 'dout',
  inboxEntry: 'inbox',
  llmProfile: 'llmp',
  mcpServer: 'mcp',
  toolPolicy: 'tpol',
  llmProfileOverride: 'pllmo',
  mcpBinding: 'pmcpb',
  toolPolicyOverride: 'ptpo',
  character: 'chr',
  characterVersion: 'chrv',
  preset: 'prs',
  presetVersion: 'prsv',
  regexProfile: 'rgx',
  regexProfileVersion: 'rgxv',
  worldbook: 'wb',
  worldbookVersion: 'wbv',
  worldbookEntry: 'wbe',
  userCard: 'usr',
  vcTag: 'tag',
  request: 'req',
} as const;

export type IdPrefix = (typeof ID_PREFIX)[keyof typeof ID_PREFIX] | (string & {});

let lastTime = 0;
let lastRandom: number[] = [];

function encodeTime(time: number): string {
  let out = '';
  let t = time;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[t % 32] + out;
    t = Math.floor(t / 32);
  }
  return out;
}

function randomDigits(): number[] {
  const bytes = randomBytes(16);
  return Array.from(bytes, (b) => b % 32);
}

/** Monotonic within one process: ids made in the same millisecond still sort in creation order. */
export function newId(prefix: IdPrefix): string {
  const now = Date.now();
  let digits: number[];
  if (now <= lastTime) {
    digits = [...lastRandom];
    for (let i = digits.length - 1; i >= 0; i--) {
      if (digits[i] < 31) {
        digits[i]++;
        break;
      }
      digits[i] = 0;
    }
  } else {
    lastTime = now;
    digits = randomDigits();
  }
  lastRandom = digits;
  return `${prefix}_${encodeTime(Math.max(now, lastTime))}${digits.map((d) => ALPHABET[d]).join('')}`;
}

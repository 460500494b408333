import { randomFillSync } from 'node:crypto';

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
  agentType: 'agt',
  agentBinding: 'agb',
  derivedOutput: 'dout',
  inboxEntry: 'inbox',
  nodeGraph: 'ngr',
  clientDataNamespace: 'cdns',
  sessionStateMutation: 'ssm',
  pageStagedWrite: 'psw',
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

/** The last time encoded, and its encoding (ids made in the same millisecond share it). */
let encodedTime = -1;
let encodedTimeText = '';

function encodeTime(time: number): string {
  if (time === encodedTime) return encodedTimeText;
  let out = '';
  let t = time;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[t % 32] + out;
    t = Math.floor(t / 32);
  }
  encodedTime = time;
  encodedTimeText = out;
  return out;
}

/**
 * Random bytes are drawn from the CSPRNG a pool at a time (as `crypto.randomUUID` does) rather than
 * one `randomBytes` call per id: the same randomness, without a native call and a Buffer per id.
 * Each byte is used once.
 */
const POOL_BYTES = 4096;
const pool = Buffer.allocUnsafe(POOL_BYTES);
let poolOffset = POOL_BYTES;

function randomDigits(): number[] {
  if (poolOffset + 16 > POOL_BYTES) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const digits = new Array<number>(16);
  // 256 is a multiple of 32, so the low five bits of a uniform byte are a uniform digit.
  for (let i = 0; i < 16; i++) digits[i] = pool[poolOffset + i] & 31;
  poolOffset += 16;
  return digits;
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
  let body = encodeTime(Math.max(now, lastTime));
  for (let i = 0; i < digits.length; i++) body += ALPHABET[digits[i]];
  return `${prefix}_${body}`;
}

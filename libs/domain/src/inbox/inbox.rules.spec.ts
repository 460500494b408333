import { DomainError } from '../errors';
import {
  decideInboxEntry,
  INBOX_BODY_MAX_BYTES,
  INBOX_WRITE_NAMES,
  inboxDecisionReason,
  requireInboxKind,
  requireInboxTitle,
  serialiseInboxBody,
  type InboxDecision,
  type InboxEntryStatus,
} from './inbox.rules';

const failure = (fn: () => unknown): { code: string; status: number } | undefined => {
  try {
    fn();
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return { code: (error as DomainError).code, status: (error as DomainError).status };
  }
};

describe('inbox decisions', () => {
  const table: Array<[InboxEntryStatus, InboxDecision, string]> = [
    ['pending', 'accepted', 'accepted'],
    ['pending', 'rejected', 'rejected'],
    ['accepted', 'accepted', 'inbox_entry_already_decided'],
    ['accepted', 'rejected', 'inbox_entry_already_decided'],
    ['rejected', 'rejected', 'inbox_entry_already_decided'],
    ['rejected', 'accepted', 'inbox_entry_already_decided'],
  ];
  it.each(table)('%s + %s -> %s', (from, decision, expected) => {
    if (expected === 'inbox_entry_already_decided') {
      expect(failure(() => decideInboxEntry(from, decision))).toEqual({ code: expected, status: 409 });
    } else {
      expect(decideInboxEntry(from, decision)).toBe(expected);
    }
  });

  it('names the writes', () => {
    expect(INBOX_WRITE_NAMES.create).toEqual({ log: 'inbox_entry.create', event: 'inbox_entry.created' });
    expect(INBOX_WRITE_NAMES.decide).toEqual({ log: 'inbox_entry.decide', event: 'inbox_entry.decided' });
  });
});

describe('inbox text fields', () => {
  it('kind: 1-128 code points', () => {
    expect(requireInboxKind('k')).toBe('k');
    expect(requireInboxKind('k'.repeat(128))).toHaveLength(128);
    expect(requireInboxKind('😀'.repeat(128))).toHaveLength(256);
    for (const bad of ['', 'k'.repeat(129), '😀'.repeat(129), 5, null, 'a\u0000b']) {
      expect(failure(() => requireInboxKind(bad))).toEqual({ code: 'validation_error', status: 400 });
    }
  });

  it('title: 1-200 code points', () => {
    expect(requireInboxTitle('t'.repeat(200))).toHaveLength(200);
    for (const bad of ['', 't'.repeat(201), undefined, 'x\u0000']) {
      expect(failure(() => requireInboxTitle(bad))?.code).toBe('validation_error');
    }
  });

  it('reason: absent or null is none; else 1-2000 code points', () => {
    expect(inboxDecisionReason(undefined)).toBeNull();
    expect(inboxDecisionReason(null)).toBeNull();
    expect(inboxDecisionReason('r'.repeat(2000))).toHaveLength(2000);
    for (const bad of ['', 'r'.repeat(2001), 3, {}, 'a\u0000']) {
      expect(failure(() => inboxDecisionReason(bad))?.code).toBe('validation_error');
    }
  });
});

describe('inbox body', () => {
  it('serialises plain JSON and counts UTF-8 bytes', () => {
    expect(serialiseInboxBody({ a: 'é' })).toEqual({ json: '{"a":"é"}', byteCount: 10 });
    expect(serialiseInboxBody(null).json).toBe('null');
  });

  it('accepts exactly 64 KiB and refuses one byte more with 413 inbox_entry_payload_too_large', () => {
    const atLimit = 'x'.repeat(INBOX_BODY_MAX_BYTES - 2);
    expect(serialiseInboxBody(atLimit).byteCount).toBe(65536);
    expect(failure(() => serialiseInboxBody(`${atLimit}x`))).toEqual({
      code: 'inbox_entry_payload_too_large',
      status: 413,
    });
  });

  it('refuses what is not plain JSON with 400 inbox_entry_payload_invalid', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 130; i++) deep = [deep];
    for (const bad of [undefined, Number.NaN, 'a\u0000b', new Date(0), deep]) {
      expect(failure(() => serialiseInboxBody(bad))).toEqual({
        code: 'inbox_entry_payload_invalid',
        status: 400,
      });
    }
  });
});

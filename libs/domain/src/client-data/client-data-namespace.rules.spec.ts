import { DomainError } from '../errors';
import {
  checkNamespaceCount,
  checkNamespaceDescription,
  checkNamespaceNameFree,
  isNamespaceName,
  namespaceChanges,
  namespaceSettings,
  type NamespaceSettings,
} from './client-data-namespace.rules';

const codeOf = (fn: () => void): string | null => {
  try {
    fn();
    return null;
  } catch (error) {
    return error instanceof DomainError ? `${error.status} ${error.code}` : 'other';
  }
};

describe('namespace registry rules', () => {
  it('takes names of the registry pattern, 1 to 64 characters', () => {
    for (const name of ['a', 'rpg.inventory', 'x-1_2.y', 'a'.repeat(64)])
      expect(isNamespaceName(name)).toBe(true);
    for (const name of ['', 'A', '1a', '_a', 'a b', 'a/b', 'é', 'a'.repeat(65)])
      expect(isNamespaceName(name)).toBe(false);
  });

  it('refuses the public namespaces with 409 client_data_namespace_reserved', () => {
    expect(codeOf(() => checkNamespaceNameFree('game_state'))).toBe('409 client_data_namespace_reserved');
    expect(codeOf(() => checkNamespaceNameFree('game_state2'))).toBeNull();
  });

  it('counts description characters as code points, at most 2000', () => {
    expect(codeOf(() => checkNamespaceDescription(null))).toBeNull();
    expect(codeOf(() => checkNamespaceDescription(undefined))).toBeNull();
    expect(codeOf(() => checkNamespaceDescription('d'.repeat(2000)))).toBeNull();
    expect(codeOf(() => checkNamespaceDescription('😀'.repeat(2000)))).toBeNull();
    expect(codeOf(() => checkNamespaceDescription('d'.repeat(2001)))).toBe('400 validation_error');
    // U+FE0F is a code point of its own (char_length counts it) though validators may skip it.
    expect(codeOf(() => checkNamespaceDescription('d'.repeat(1999) + '\u2764\ufe0f'))).toBe(
      '400 validation_error',
    );
  });

  it('refuses descriptions Postgres cannot store', () => {
    for (const bad of ['a\u0000b', 'a\ud800b', '\udc00'])
      expect(codeOf(() => checkNamespaceDescription(bad))).toBe('400 validation_error');
  });

  it('defaults replay, 1000 items and 1 MiB', () => {
    expect(namespaceSettings({})).toEqual({
      description: null,
      replay_policy: 'replay',
      max_items: 1000,
      max_bytes: 1048576,
    });
    expect(
      namespaceSettings({ description: 'x', replay_policy: 'block', max_items: 1, max_bytes: 2 }),
    ).toEqual({
      description: 'x',
      replay_policy: 'block',
      max_items: 1,
      max_bytes: 2,
    });
  });

  it('finds the fields a PATCH changes; a PATCH of current values changes nothing', () => {
    const current: NamespaceSettings = {
      description: 'd',
      replay_policy: 'replay',
      max_items: 10,
      max_bytes: 100,
    };
    expect(namespaceChanges(current, { ...current })).toEqual({});
    expect(namespaceChanges(current, { max_items: 10, replay_policy: 'confirm' })).toEqual({
      replay_policy: 'confirm',
    });
    expect(namespaceChanges(current, { description: null })).toEqual({ description: null });
    expect(namespaceChanges({ ...current, description: null }, { description: null })).toEqual({});
    expect(namespaceChanges(current, { description: undefined, max_bytes: 5 })).toEqual({ max_bytes: 5 });
  });

  it('counts namespaces: 100 in all pass, one more is refused, for one or several at once', () => {
    expect(codeOf(() => checkNamespaceCount(99, 1))).toBeNull();
    expect(codeOf(() => checkNamespaceCount(100, 1))).toBe('409 client_data_namespace_limit_exceeded');
    expect(codeOf(() => checkNamespaceCount(60, 40))).toBeNull();
    expect(codeOf(() => checkNamespaceCount(60, 41))).toBe('409 client_data_namespace_limit_exceeded');
    expect(codeOf(() => checkNamespaceCount(150, 0))).toBeNull();
  });
});

import { MASK, maskSensitive, summariseDiff } from './operation-log.rules';

describe('maskSensitive', () => {
  it('masks keys and secrets at any depth and replaces content by its length', () => {
    expect(
      maskSensitive({
        api_key: 'sk-live',
        nested: { apiKey: 'x', password: 'p', token_count: 12 },
        content: 'a long message',
        list: [{ secret: 's' }],
      }),
    ).toEqual({
      api_key: MASK,
      nested: { apiKey: MASK, password: MASK, token_count: 12 },
      content: '[14 chars]',
      list: [{ secret: MASK }],
    });
  });
});

describe('summariseDiff', () => {
  it('lists changed paths without values', () => {
    const diff = summariseDiff(
      { title: 'a', status: 'active', gone: 1 },
      { title: 'b', status: 'active', added: 2 },
    );
    expect(diff).toEqual({
      mode: 'summary',
      total_changes: 3,
      changes: [
        { path: 'added', change_type: 'added' },
        { path: 'gone', change_type: 'removed' },
        { path: 'title', change_type: 'changed' },
      ],
      truncated: false,
      max_bytes: 16000,
    });
    expect(JSON.stringify(diff)).not.toContain('"b"');
  });

  it('truncates at max_bytes and says so', () => {
    const before = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`field_${i}`, i]));
    const after = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`field_${i}`, i + 1]));
    const diff = summariseDiff(before, after, 1000);
    expect(diff.total_changes).toBe(500);
    expect(diff.truncated).toBe(true);
    expect(JSON.stringify(diff).length).toBeLessThanOrEqual(1000);
  });
});

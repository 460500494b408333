import { DIFF_MAX_BYTES, MASK, maskSensitive, summariseDiff } from './operation-log.rules';

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

  describe('at max_bytes (16000) and one byte past it', () => {
    const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');
    const diffOf = (paths: string[]) =>
      summariseDiff(
        Object.fromEntries(paths.map((p) => [p, 0])),
        Object.fromEntries(paths.map((p) => [p, 1])),
      );
    /** The untruncated summary's size in UTF-8 bytes for these changed paths. */
    const fullSize = (paths: string[]) =>
      bytes({
        mode: 'summary',
        total_changes: paths.length,
        changes: paths.map((path) => ({ path, change_type: 'changed' })),
        truncated: false,
        max_bytes: DIFF_MAX_BYTES,
      });
    /** 300 short paths and a last one padded with `pad` so the full summary is `target` bytes. */
    const pathsOfSize = (target: number, pad: string) => {
      const paths = Array.from({ length: 300 }, (_, i) => `f${String(i).padStart(3, '0')}`);
      paths.push('z');
      while (fullSize(paths) + Buffer.byteLength(pad) <= target) paths[300] += pad;
      while (fullSize(paths) < target) paths[300] += 'x';
      expect(fullSize(paths)).toBe(target);
      return paths;
    };

    it('a summary of exactly max_bytes is kept whole', () => {
      const diff = diffOf(pathsOfSize(DIFF_MAX_BYTES, 'x'));
      expect(diff).toMatchObject({ total_changes: 301, truncated: false, max_bytes: 16000 });
      expect(diff.changes).toHaveLength(301);
      expect(bytes(diff)).toBe(DIFF_MAX_BYTES);
    });

    it('one byte more truncates it to at most max_bytes', () => {
      const diff = diffOf(pathsOfSize(DIFF_MAX_BYTES + 1, 'x'));
      expect(diff).toMatchObject({ total_changes: 301, truncated: true });
      expect(diff.changes).toHaveLength(300);
      expect(bytes(diff)).toBeLessThanOrEqual(DIFF_MAX_BYTES);
    });

    it('counts UTF-8 bytes, not characters', () => {
      const whole = diffOf(pathsOfSize(DIFF_MAX_BYTES, 'é'));
      expect(whole.truncated).toBe(false);
      expect(bytes(whole)).toBe(DIFF_MAX_BYTES);
      const over = diffOf(pathsOfSize(DIFF_MAX_BYTES + 1, 'é'));
      expect(over.truncated).toBe(true);
      expect(bytes(over)).toBeLessThanOrEqual(DIFF_MAX_BYTES);
    });
  });
});

import { defaultBranchName } from './create-branch.use-case';
import { transcriptWindow } from './floor-reads';
import { pageChecksum } from './message-writes';

describe('transcriptWindow', () => {
  // A lineage of 10 floors: floor_no 0..9.
  const w = (window: { after_floor_no?: number; before_floor_no?: number; limit: number }) =>
    transcriptWindow(9, window);

  it('reads the first floors without a bound', () => {
    expect(w({ limit: 3 })).toEqual({ from: 0, to: 2, has_more: true });
    expect(w({ limit: 10 })).toEqual({ from: 0, to: 9, has_more: false });
    expect(w({ limit: 500 })).toEqual({ from: 0, to: 9, has_more: false });
  });

  it('pages forward after a floor', () => {
    expect(w({ after_floor_no: 2, limit: 3 })).toEqual({ from: 3, to: 5, has_more: true });
    expect(w({ after_floor_no: 6, limit: 3 })).toEqual({ from: 7, to: 9, has_more: false });
    expect(w({ after_floor_no: 9, limit: 3 }).has_more).toBe(false);
    const past = w({ after_floor_no: 20, limit: 3 });
    expect(past.from > past.to).toBe(true);
  });

  it('reads the floors just below a bound', () => {
    expect(w({ before_floor_no: 10, limit: 3 })).toEqual({ from: 7, to: 9, has_more: true });
    expect(w({ before_floor_no: 99, limit: 3 })).toEqual({ from: 7, to: 9, has_more: true });
    expect(w({ before_floor_no: 3, limit: 3 })).toEqual({ from: 0, to: 2, has_more: false });
    expect(w({ before_floor_no: 4, limit: 3 })).toEqual({ from: 1, to: 3, has_more: true });
    const none = w({ before_floor_no: 0, limit: 3 });
    expect(none.from > none.to).toBe(true);
    expect(none.has_more).toBe(false);
  });

  it('reads forward between two bounds', () => {
    expect(w({ after_floor_no: 1, before_floor_no: 6, limit: 2 })).toEqual({
      from: 2,
      to: 3,
      has_more: true,
    });
    expect(w({ after_floor_no: 1, before_floor_no: 6, limit: 4 })).toEqual({
      from: 2,
      to: 5,
      has_more: false,
    });
  });

  it('has nothing for an empty branch', () => {
    expect(transcriptWindow(null, { limit: 100 })).toEqual({ from: 0, to: -1, has_more: false });
  });
});

describe('defaultBranchName', () => {
  it('takes the smallest free branch-<n> from 1', () => {
    expect(defaultBranchName(['main'])).toBe('branch-1');
    expect(defaultBranchName(['main', 'branch-1', 'branch-3'])).toBe('branch-2');
    expect(defaultBranchName(['main', 'branch-1', 'branch-2'])).toBe('branch-3');
  });
});

describe('pageChecksum', () => {
  it('depends on role, content, format and hidden flag', () => {
    const base = { role: 'assistant' as const, content: 'Hi', source: 'model' };
    const sum = pageChecksum([base]);
    expect(sum).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(pageChecksum([{ ...base, source: 'import' }])).toBe(sum);
    expect(pageChecksum([{ ...base, role: 'user' }])).not.toBe(sum);
    expect(pageChecksum([{ ...base, content: 'Hi!' }])).not.toBe(sum);
    expect(pageChecksum([{ ...base, is_hidden: true }])).not.toBe(sum);
    expect(pageChecksum([{ ...base, content_format: 'markdown' }])).not.toBe(sum);
  });
});

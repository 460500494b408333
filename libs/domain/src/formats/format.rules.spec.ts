import { JSON_MAX_DEPTH } from '../text/json-depth';
import { parseExtJsonl } from './chat-jsonl';
import { parseJsonText } from './format.rules';
import { expectParseError } from './format.test-support';

/** An array nesting `levels` levels (`[]` is one). */
const nestedArray = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);

describe(`imported JSON nests at most JSON_MAX_DEPTH (${JSON_MAX_DEPTH}) levels`, () => {
  it('a JSON file (card, backup document) at the limit is read, one level past it is 400 import_parse_error', () => {
    expect(parseJsonText(`{"a":${nestedArray(JSON_MAX_DEPTH - 1)}}`, 'card file')).toEqual({
      a: expect.any(Array),
    });
    const error = expectParseError(
      () => parseJsonText(`{"a":${nestedArray(JSON_MAX_DEPTH)}}`, 'card file'),
      /card file is nested deeper than 256 levels/,
    );
    expect(error.details).toEqual({ max_depth: JSON_MAX_DEPTH });
  });

  it('a chat line at the limit is read, one level past it refuses the file with its line number', () => {
    const header = JSON.stringify({ user_name: 'You', character_name: 'Bot', chat_metadata: {} });
    const line = (extraLevels: number) =>
      `{"name":"You","is_user":true,"send_date":"2024-01-01T00:00:00.000Z","mes":"hi","extra":{"deep":${nestedArray(extraLevels)}}}`;
    // The line object is level 1, `extra` level 2, `deep` from level 3 on.
    expect(() =>
      parseExtJsonl(`${header}\n${line(JSON_MAX_DEPTH - 2)}\n`, { now: 1_700_000_000_000 }),
    ).not.toThrow();
    const error = expectParseError(() =>
      parseExtJsonl(`${header}\n${line(JSON_MAX_DEPTH - 1)}\n`, { now: 1_700_000_000_000 }),
    );
    expect(error.details).toEqual({ line: 2, max_depth: JSON_MAX_DEPTH });
  });
});

import {
  expectFieldEquivalent,
  expectParseError,
  fixtureFiles,
  readJsonFixture,
} from './format.test-support';
import { exportPreset, parsePreset } from './preset';

const FILES = fixtureFiles('presets');

describe('preset', () => {
  it('has the two preset fixtures', () => {
    expect(FILES).toHaveLength(2);
  });

  it.each(FILES)('%s exports unchanged from import, field by field', (file) => {
    const original = readJsonFixture('presets', file);
    const parsed = parsePreset(original);
    expect(parsed.prompt_count).toBe((original.prompts as unknown[]).length);
    expect(parsed.prompt_order_character_ids).toEqual(expect.arrayContaining([100000]));
    const exported = exportPreset(parsed.data);
    expectFieldEquivalent(exported, original);
    expect(JSON.stringify(exported)).toBe(JSON.stringify(original));
  });

  it('keeps unknown fields and macros literally and does not share objects with the input', () => {
    const input = {
      custom_thing: { nested: [1, 2] },
      prompts: [{ identifier: 'main', content: "Write {{char}}'s reply to {{user}}." }],
    };
    const parsed = parsePreset(input);
    input.custom_thing.nested.push(3);
    expect(exportPreset(parsed.data)).toEqual({
      custom_thing: { nested: [1, 2] },
      prompts: [{ identifier: 'main', content: "Write {{char}}'s reply to {{user}}." }],
    });
    expect(parsed.prompt_count).toBe(1);
    expect(parsed.prompt_order_character_ids).toEqual([]);
  });

  it('rejects malformed presets with import_parse_error', () => {
    expectParseError(() => parsePreset([]), /JSON object/);
    expectParseError(() => parsePreset('text'), /JSON object/);
    expectParseError(() => parsePreset({ prompts: {} }), /prompts must be an array/);
    expectParseError(() => parsePreset({ prompts: ['x'] }), /prompts\[0\] must be an object/);
    expectParseError(
      () => parsePreset({ prompts: [{ identifier: 3 }] }),
      /prompts\[0\]\.identifier must be a string/,
    );
    expectParseError(
      () => parsePreset({ prompts: [{ identifier: 'main', content: 1 }] }),
      /prompts\[0\]\.content must be a string/,
    );
    expectParseError(() => parsePreset({ prompt_order: {} }), /prompt_order must be an array/);
    expectParseError(
      () => parsePreset({ prompt_order: [{ character_id: 100001 }] }),
      /prompt_order\[0\] must be an object with an order array/,
    );
    expectParseError(() => parsePreset({ extensions: 'x' }), /extensions must be an object/);
  });
});

import { asScripts, defaultRegexProfileName, regexProfileStats } from './regex-profile-rules';

describe('regex profile rules', () => {
  it('names a profile after its first script, trimmed and cut to 200 characters', () => {
    expect(defaultRegexProfileName([{ scriptName: ' Strip OOC ' }, { scriptName: 'Other' }])).toBe(
      'Strip OOC',
    );
    expect(defaultRegexProfileName([{ scriptName: 'é'.repeat(201) }])).toBe('é'.repeat(200));
    expect(defaultRegexProfileName([{ scriptName: '😀'.repeat(201) }])).toBe('😀'.repeat(200));
  });

  it('falls back to Unnamed Regex Profile', () => {
    expect(defaultRegexProfileName([])).toBe('Unnamed Regex Profile');
    expect(defaultRegexProfileName([{ scriptName: '  ' }])).toBe('Unnamed Regex Profile');
    expect(defaultRegexProfileName([{ scriptName: 5 }, { scriptName: 'second' }])).toBe(
      'Unnamed Regex Profile',
    );
  });

  it('counts scripts for the head row', () => {
    const stats = regexProfileStats([{ findRegex: '/a/', placement: [2] }, { findRegex: '' }]);
    expect(stats.script_count).toBe(2);
    expect(stats.compat_report).toMatchObject({ stored_count: 2, unsupported_runtime_count: 1 });
  });

  it('reads a stored version as a script list', () => {
    expect(asScripts([{ a: 1 }])).toEqual([{ a: 1 }]);
    expect(asScripts({ a: 1 })).toEqual([]);
    expect(asScripts(null)).toEqual([]);
  });
});

/**
 * Example dialogues (ST `parseMesExamples` + `parseExampleIntoIndividual`, external-formats.md §e.3 step 7):
 * the card's `mes_example` is split into `<START>` blocks; each block becomes system messages named
 * `example_user` / `example_assistant` by the speaker prefix of its lines.
 */

export interface ExampleMessage {
  role: 'system';
  content: string;
  name: 'example_user' | 'example_assistant';
}

/**
 * Splits example text into `<START>\n…\n` blocks exactly as ST 1.18's `parseMesExamples` (script.js): empty
 * text or exactly `<START>` gives none; text not starting with `<START>` (case-sensitive) gets one prepended
 * to its trimmed self; the split itself ignores case. So a lower-case `<start>` heading or text that is only
 * whitespace yields an empty block (which ST still announces with the example separator).
 */
export function splitExampleBlocks(text: string): string[] {
  const value = text.replace(/\r/g, '');
  if (value.length === 0 || value === '<START>') return [];
  const withHeader = value.startsWith('<START>') ? value : `<START>\n${value.trim()}`;
  return withHeader
    .split(/<START>/gi)
    .slice(1)
    .map((block) => `<START>\n${block.trim()}\n`);
}

/**
 * One block into messages. The first line (the `<START>` heading) is skipped; a line starting with
 * `<user>:` opens a user turn, `<char>:` an assistant turn; the speaker prefix is removed once and the
 * text trimmed. Lines before the first speaker join the first message; a block without any speaker
 * gives no message (ST's behaviour).
 */
export function parseExampleBlock(block: string, userName: string, charName: string): ExampleMessage[] {
  const lines = block
    .replace(/<START>/i, '{Example Dialogue:}')
    .replace(/\r/g, '')
    .split('\n');
  const out: ExampleMessage[] = [];
  let current: string[] = [];
  let speaker: 'user' | 'char' | null = null;
  const flush = () => {
    if (speaker === null) return;
    const prefix = `${speaker === 'user' ? userName : charName}:`;
    const joined = current.join('\n');
    const at = joined.indexOf(prefix);
    const text = (at >= 0 ? joined.slice(0, at) + joined.slice(at + prefix.length) : joined).trim();
    out.push({
      role: 'system',
      content: text,
      name: speaker === 'user' ? 'example_user' : 'example_assistant',
    });
    current = [];
  };
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith(`${userName}:`)) {
      if (speaker === 'char') flush();
      speaker = 'user';
    } else if (line.startsWith(`${charName}:`)) {
      if (speaker === 'user') flush();
      speaker = 'char';
    }
    current.push(line);
  }
  flush();
  return out;
}

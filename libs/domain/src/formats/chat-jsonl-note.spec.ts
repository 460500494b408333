import { authorsNoteOfHeader, withAuthorsNote } from './chat-jsonl-note';
import { serializeExtJsonl } from './chat-jsonl-export';
import { parseExtJsonl } from './chat-jsonl';
import { readFixture } from './format.test-support';

/** ST authors-note.js `metadata_keys` in an ext_jsonl header (docs/decisions.md "Author's note and persona position"). */
describe('ext_jsonl author’s note (chat_metadata.note_*)', () => {
  const header = (chat_metadata: unknown) => ({
    chat_metadata,
    user_name: 'unused',
    character_name: 'unused',
  });
  const line = { name: 'User', is_user: true, mes: 'hi', send_date: '2026-11-21T21:19:53.391Z', extra: {} };

  describe('authorsNoteOfHeader', () => {
    it('reads ST 1.18’s header as written (the fixture’s defaults)', () => {
      const text = readFixture('chats', 'MacroMage.swipes.st-1.18.0.jsonl').toString('utf8');
      const parsed = parseExtJsonl(text, { now: 0 });
      expect(authorsNoteOfHeader(parsed.header)).toEqual({
        prompt: '',
        interval: 1,
        depth: 4,
        position: 'in_chat',
        role: 'system',
      });
    });

    it('maps ST’s numbers: note_position 0/1/2, note_role 0/1/2', () => {
      const read = (position: number, role: number) =>
        authorsNoteOfHeader(header({ note_position: position, note_role: role }));
      expect(read(0, 0)).toEqual({ position: 'after_scenario', role: 'system' });
      expect(read(1, 1)).toEqual({ position: 'in_chat', role: 'user' });
      expect(read(2, 2)).toEqual({ position: 'before_prompt', role: 'assistant' });
    });

    it('keeps only the keys present with ST’s type; others are left out', () => {
      expect(
        authorsNoteOfHeader(
          header({
            note_prompt: 5,
            note_interval: '2',
            note_depth: 1.5,
            note_position: 3,
            note_role: 'user',
          }),
        ),
      ).toEqual({});
      expect(authorsNoteOfHeader(header({ note_prompt: 'Be terse.', note_depth: 0 }))).toEqual({
        prompt: 'Be terse.',
        depth: 0,
      });
      // Bounds are the settings rules' to judge: an integer out of Hearth's range is still read.
      expect(authorsNoteOfHeader(header({ note_interval: -3 }))).toEqual({ interval: -3 });
      expect(authorsNoteOfHeader(header('x'))).toEqual({});
      expect(authorsNoteOfHeader({ user_name: 'unused' })).toEqual({});
      expect(authorsNoteOfHeader(null)).toEqual({});
    });
  });

  describe('withAuthorsNote and the export', () => {
    it('overlays the set keys as ST numbers, keeps the header’s other fields and key order, copies', () => {
      const captured = {
        chat_metadata: {
          integrity: 'abc',
          note_prompt: 'old',
          note_interval: 1,
          note_position: 1,
          tainted: true,
        },
        user_name: 'unused',
        character_name: 'unused',
        extra_tool_field: { a: 1 },
      };
      const out = withAuthorsNote(captured, { prompt: 'NEW', position: 'before_prompt', role: 'assistant' });
      expect(out).toEqual({
        chat_metadata: {
          integrity: 'abc',
          note_prompt: 'NEW',
          note_interval: 1,
          note_position: 2,
          tainted: true,
          note_role: 2,
        },
        user_name: 'unused',
        character_name: 'unused',
        extra_tool_field: { a: 1 },
      });
      expect(Object.keys(out.chat_metadata as object)).toEqual([
        'integrity',
        'note_prompt',
        'note_interval',
        'note_position',
        'tainted',
        'note_role',
      ]);
      expect(captured.chat_metadata.note_prompt).toBe('old');
    });

    it('without a set key the header is unchanged; a header without chat_metadata gets one', () => {
      const plain = header({ integrity: 'x' });
      expect(withAuthorsNote(plain, {})).toBe(plain);
      expect(withAuthorsNote(plain, null)).toBe(plain);
      expect(withAuthorsNote({ user_name: 'Me' }, { depth: 7, interval: 0 })).toEqual({
        user_name: 'Me',
        chat_metadata: { note_interval: 0, note_depth: 7 },
      });
    });

    it('serializeExtJsonl: the note goes into a captured header and into a new one; read back the same', () => {
      const note = {
        prompt: 'NOTE',
        interval: 2,
        depth: 1,
        position: 'in_chat' as const,
        role: 'user' as const,
      };
      const floors = [
        { pages: [{ page_kind: 'input' as const, is_active: true, version: 1, messages: [] }] },
      ];
      const names = { user_name: 'User', character_name: 'Bot' };
      const fresh = serializeExtJsonl({ floors, authors_note: note }, names);
      expect(JSON.parse(fresh.split('\n')[0])).toEqual({
        chat_metadata: {
          note_prompt: 'NOTE',
          note_interval: 2,
          note_depth: 1,
          note_position: 1,
          note_role: 1,
        },
        user_name: 'unused',
        character_name: 'unused',
      });
      const captured = header({ integrity: 'i', note_prompt: '', note_depth: 4 });
      const text = serializeExtJsonl({ header: captured, floors, authors_note: { depth: 9 } }, names);
      expect(JSON.parse(text.split('\n')[0]).chat_metadata).toEqual({
        integrity: 'i',
        note_prompt: '',
        note_depth: 9,
      });
      const roundTrip = `${fresh}\n${JSON.stringify(line)}`;
      expect(authorsNoteOfHeader(parseExtJsonl(roundTrip, { now: 0 }).header)).toEqual(note);
    });
  });
});

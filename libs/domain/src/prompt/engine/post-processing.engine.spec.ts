import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseWorldbook } from '../../formats/worldbook';
import { postProcessPrompt } from '../assembly/post-processing';
import { buildPrompt } from './build-prompt';
import type { PromptEngineInput } from './engine.types';

const GOLDEN = join(__dirname, '..', '__fixtures__', 'golden-example', 'a-default-seraphina-first-message');
const readJson = (...parts: string[]) => JSON.parse(readFileSync(join(GOLDEN, ...parts), 'utf8'));

/** The golden turn (as in build-prompt.spec.ts), with a given post-processing type. */
function input(extra: Partial<PromptEngineInput> = {}): PromptEngineInput {
  const card = readJson('inputs', 'card', 'Seraphina.ccv3.chara_card_v3.json').data;
  const preset = readJson('inputs', 'preset', 'openai_Default.st-1.18.0.json');
  const settings = readJson('inputs', 'settings.json');
  const book = parseWorldbook(readJson('inputs', 'worldbooks', 'Eldoria.st-1.18.0.json'));
  const history = readFileSync(join(GOLDEN, 'inputs', 'history.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => JSON.parse(line) as { is_user: boolean; mes: string; name: string });
  return {
    seed: 'golden',
    now: Date.UTC(2026, 10, 21, 21, 18, 40),
    user: { name: settings.persona.name, description: settings.persona.description, in_prompt: true },
    character: { id: 'chr_seraphina', version_id: 'chrv_1', data: card },
    preset: {
      data: {
        ...preset,
        openai_max_context: settings.chat_completion.openai_max_context,
        openai_max_tokens: settings.chat_completion.openai_max_tokens,
      },
    },
    lorebooks: [{ id: 'wb_eldoria', name: 'Eldoria', source: 'character', entries: book.entries }],
    regex: null,
    history: history.map((m, i) => ({
      floor_no: i,
      role: m.is_user ? ('user' as const) : ('assistant' as const),
      name: m.name,
      content: m.mes,
    })),
    user_input: readFileSync(join(GOLDEN, 'inputs', 'user_message.txt'), 'utf8').replace(/\n$/, ''),
    provider: { kind: 'openai-compatible', model_id: 'fake-model' },
    ...extra,
  };
}

describe('buildPrompt: post_processing (after squash, before the policy structure step)', () => {
  const golden = readJson('request.json').messages as Array<{
    role: 'system' | 'user' | 'assistant';
    content: string;
  }>;

  it('none (the default) leaves ST’s request as it is and traces the mode', () => {
    const result = buildPrompt(input());
    expect(result.messages).toEqual(golden);
    expect(result.runtime_trace.post_processing).toEqual({
      mode: 'none',
      merged_count: 0,
      placeholder_inserted: false,
      system_to_user_count: 0,
    });
    expect(buildPrompt(input({ post_processing: 'none' })).messages).toEqual(golden);
  });

  it.each(['merge', 'semi', 'strict', 'single'] as const)(
    '%s gives what ST’s server makes of the golden request',
    (mode) => {
      const result = buildPrompt(input({ post_processing: mode }));
      const expected = postProcessPrompt(golden, mode, { charName: 'Seraphina', userName: 'User' });
      expect(result.messages).toEqual(expected.messages);
      expect(result.runtime_trace.post_processing).toEqual(expected.trace);
      expect(result.prompt_snapshot.messages).toEqual(expected.messages);
      expect(result.prompt_snapshot.token_estimate).toBe(result.token_estimate);
    },
  );

  it('strict: one system message first, then a user turn; the golden prompt starts system → assistant, so the placeholder comes in', () => {
    const result = buildPrompt(input({ post_processing: 'strict' }));
    expect(result.messages[0].role).toBe('system');
    expect(result.messages.slice(1).every((m) => m.role !== 'system')).toBe(true);
    expect(golden[golden.findIndex((m) => m.role !== 'system')].role).toBe('assistant');
    expect(result.messages[1]).toEqual({ role: 'user', content: '[Start a new chat]' });
    expect(result.runtime_trace.post_processing.placeholder_inserted).toBe(true);
    // semi does the same without the placeholder (external-formats.md §j).
    const semi = buildPrompt(input({ post_processing: 'semi' }));
    expect(semi.messages[1].role).toBe('assistant');
    expect(semi.runtime_trace.post_processing.placeholder_inserted).toBe(false);
  });

  it('the structure step runs on the post-processed messages', () => {
    const result = buildPrompt(
      input({
        post_processing: 'merge',
        policy_layers: [{ source: 'session_policy', value: { structure: { mode: 'flattened' } } }],
      }),
    );
    expect(result.runtime_trace.post_processing.mode).toBe('merge');
    expect(result.runtime_trace.structure.mode).toBe('flattened');
  });

  it('an unknown value is a warning and runs as none (the engine never throws)', () => {
    const result = buildPrompt(input({ post_processing: 'bogus' as never }));
    expect(result.messages).toEqual(golden);
    expect(result.warnings).toEqual(
      expect.arrayContaining([expect.objectContaining({ code: 'invalid_post_processing' })]),
    );
  });

  it('book-level defaults reach the lorebook (scanDepth 0 on the book: no message is scanned)', () => {
    const base = buildPrompt(input());
    const book = input().lorebooks[0];
    const shallow = buildPrompt(input({ lorebooks: [{ ...book, defaults: { scanDepth: 0 } }] }));
    expect(base.prompt_snapshot.worldbook_activated_entry_uids.length).toBeGreaterThan(0);
    expect(shallow.prompt_snapshot.worldbook_activated_entry_uids).toEqual([]);
  });
});

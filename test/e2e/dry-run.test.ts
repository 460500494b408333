import { tokenCounter } from '@hearth/domain/prompt/shared/token-counter';
import type { SessionRow } from '@hearth/persistence';
import { createOwnedSession } from '../support/factories/accounts';
import { characterCard, importCharacter } from '../support/factories/characters';
import { appendTurns, createFloor } from '../support/factories/conversation';
import { addMember, createAccountCaller, type Caller } from '../support/factories/members';
import { importPreset } from '../support/factories/presets';
import { importWorldbook } from '../support/factories/worldbooks';
import { findProject } from '../support/factories/projects';
import { createSession, findSessionRow } from '../support/factories/sessions';
import { allRowCounts, insertRestrictedInjection } from '../support/factories/turn-context';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

jest.setTimeout(60_000);

const injection = (overrides: Record<string, unknown> = {}) => ({
  source_kind: 'client_injection',
  title: 'Weather',
  content: 'It is raining.',
  placement: 'before_current_user_input',
  ...overrides,
});

/**
 * A text the engine's counter (o200k_base, the encoding of a session without a model) counts as exactly
 * `n` tokens: `letter` and "\n" are one token each, and the counter's pieces are cut after a newline.
 */
function textOfTokens(n: number, letter: string): string {
  const text = `${letter}\n`.repeat(Math.floor(n / 2)) + (n % 2 ? letter : '');
  expect(tokenCounter('o200k_base').count(text)).toBe(n);
  return text;
}

describe('POST /sessions/:id/respond/dry-run', () => {
  let t: TestApp;
  let other: Caller;
  let observer: Caller;

  const dryRun = (sessionId: string, body: Record<string, unknown>, key = ADMIN_KEY) =>
    t.http.post(`/sessions/${sessionId}/respond/dry-run`).set('x-api-key', key).send(body);

  /** A session of the default account with a character (greeting floor 0) and `turns` committed turns. */
  async function chatSession(
    turns = 0,
  ): Promise<{ session: SessionRow; floors: Awaited<ReturnType<typeof appendTurns>> }> {
    const character = await importCharacter(t, {
      payload: characterCard({ name: 'Aria', first_mes: 'Hello, traveller.' }),
    });
    const created = await createSession(t, { body: { character_id: character.id } });
    const session = (await findSessionRow(t, created.id))!;
    const floors = turns > 0 ? await appendTurns(t, session, turns) : [];
    return { session, floors };
  }

  beforeAll(async () => {
    t = await startTestApp();
    other = await createAccountCaller(t, { name: 'Other' });
    observer = await createAccountCaller(t, { name: 'Observer' });
  });
  afterAll(async () => {
    await t.close();
  });

  describe('the prompt', () => {
    it('holds the greeting, the history in order and the new message last, and writes nothing', async () => {
      const { session } = await chatSession(2);
      const before = await allRowCounts(t);
      const res = await dryRun(session.id, { message: 'And now?' }).expect(200);
      expect(await allRowCounts(t)).toEqual(before);
      const contents: string[] = res.body.data.messages.map((m: { content: string }) => m.content);
      const order = [
        'Hello, traveller.',
        'user: turn 0',
        'reply: turn 0',
        'user: turn 1',
        'reply: turn 1',
      ].map((c) => contents.indexOf(c));
      expect(order.every((i) => i >= 0)).toBe(true);
      expect([...order].sort((a, b) => a - b)).toEqual(order);
      expect(res.body.data.messages.at(-1)).toEqual({ role: 'user', content: 'And now?' });
      expect(res.body.data.runtime_trace.history_normalization.total).toBe(5);
    });

    it('has every field of spec 2 "Dry-run result", memory structured and empty (Hearth has no memory yet)', async () => {
      const { session } = await chatSession();
      const res = await dryRun(session.id, { message: 'Hi' }).expect(200);
      const data = res.body.data;
      for (const key of [
        'messages',
        'token_estimate',
        'available_for_reply',
        'memory',
        'memory_summary',
        'prompt_snapshot',
        'assembly',
        'runtime_trace',
      ])
        expect(data).toHaveProperty(key);
      expect(data.memory).toMatchObject({
        summary_injected: false,
        requested_write: false,
        effective_write: false,
        summary_text: null,
        selected_items: [],
        token_stats: { budget: 0, used: 0, micro_summary: 0, macro_summary: 0, direct_items: 0 },
      });
      expect(data.memory_summary).toBeNull();
      expect(data.assembly.memory_summary_injected).toBe(false);
      for (const key of [
        'macro',
        'budgets',
        'source_selection',
        'history_normalization',
        'structure',
        'delivery',
        'tool_transport',
      ])
        expect(data.runtime_trace).toHaveProperty(key);
      expect(data.prompt_snapshot.token_estimate).toBe(data.token_estimate);
    });

    it('source_floor_id starts from that floor: later floors are left out', async () => {
      const { session, floors } = await chatSession(3);
      const res = await dryRun(session.id, { message: 'x', source_floor_id: floors[0].id }).expect(200);
      const contents = res.body.data.messages.map((m: { content: string }) => m.content);
      expect(contents).toContain('reply: turn 0');
      expect(contents).not.toContain('user: turn 1');
      expect(res.body.data.runtime_trace.history_normalization.total).toBe(3);
    });

    it('branch_id reads that branch’s lineage; `main` names the main branch', async () => {
      const { session, floors } = await chatSession(2);
      const branched = await t.http
        .post(`/floors/${floors[0].id}/branch`)
        .set('x-api-key', ADMIN_KEY)
        .send({})
        .expect(201);
      const branchId = branched.body.data.branch_id;
      await appendTurns(t, session, 1, { branchId, text: () => 'on the branch' });
      const onBranch = await dryRun(session.id, { message: 'x', branch_id: branchId }).expect(200);
      const contents = onBranch.body.data.messages.map((m: { content: string }) => m.content);
      expect(contents).toContain('reply: on the branch');
      expect(contents).not.toContain('user: turn 1');
      const main = await dryRun(session.id, { message: 'x', branch_id: 'main' }).expect(200);
      expect(main.body.data.messages.map((m: { content: string }) => m.content)).toContain('user: turn 1');
    });

    it('reads a lineage that continues from floors written before lines (general reader fallback)', async () => {
      const session = (await findSessionRow(t, (await createSession(t)).id))!;
      const legacy = await createFloor(t, session);
      expect(legacy.floor.line_id).toBeNull();
      await appendTurns(t, session, 2, { text: (i) => `after legacy ${i}` });
      const res = await dryRun(session.id, { message: 'x' }).expect(200);
      const contents = res.body.data.messages.map((m: { content: string }) => m.content);
      for (const text of [
        'user: after legacy 0',
        'reply: after legacy 0',
        'user: after legacy 1',
        'reply: after legacy 1',
      ])
        expect(contents).toContain(text);
      expect(res.body.data.runtime_trace.history_normalization.total).toBe(4);
    });

    it('works on a session made before branches (no `main` yet) without creating it', async () => {
      const session = await createOwnedSession(
        t,
        (await findSessionRow(t, (await createSession(t)).id))!.account_id,
      );
      const before = await allRowCounts(t);
      const res = await dryRun(session.id, { message: 'Hello?' }).expect(200);
      expect(res.body.data.messages.at(-1)).toEqual({ role: 'user', content: 'Hello?' });
      expect(await allRowCounts(t)).toEqual(before);
    });

    it('budget and source_selection become the request_override policy layer', async () => {
      const { session } = await chatSession(1);
      const res = await dryRun(session.id, {
        message: 'x',
        budget: { max_input_tokens: 6000, reserved_completion_tokens: 500 },
        source_selection: { examples: { enabled: false } },
      }).expect(200);
      const trace = res.body.data.runtime_trace;
      expect(trace.budgets).toMatchObject({
        max_input_tokens: 6000,
        reserved_completion_tokens: 500,
        source: 'request_override',
      });
      expect(trace.policy.sources['source_selection.examples.enabled']).toBe('request_override');
      expect(res.body.data.available_for_reply).toBeLessThanOrEqual(6000 - res.body.data.token_estimate);
    });

    it('continue and regenerate send no new user message', async () => {
      const { session } = await chatSession(1);
      const res = await dryRun(session.id, { message: 'ignored', prompt_intent: 'continue' }).expect(200);
      const contents = res.body.data.messages.map((m: { content: string }) => m.content);
      expect(contents).not.toContain('ignored');
      expect(res.body.data.assembly.prompt_intent).toBe('continue');
    });

    it('a deleted preset and an unknown bound worldbook are skipped with warnings, not errors', async () => {
      const preset = await importPreset(t, ADMIN_KEY, { name: `Gone ${Date.now()}` });
      const book = await importWorldbook(
        t,
        ADMIN_KEY,
        { entries: { 0: { uid: 0, key: ['x'], content: 'x' } } },
        `Gone ${Date.now()}`,
      );
      const created = await createSession(t, { body: { preset_id: preset.id, worldbook_ids: [book.id] } });
      await t.http
        .delete(`/presets/${preset.id}`)
        .set('x-api-key', ADMIN_KEY)
        .expect((r) => expect(r.status).toBeLessThan(300));
      await t.http.delete(`/worldbooks/${book.id}`).set('x-api-key', ADMIN_KEY).expect(204);
      const res = await dryRun(created.id, { message: 'x' }).expect(200);
      const codes = res.body.data.warnings.map((w: { code: string }) => w.code);
      expect(codes).toEqual(expect.arrayContaining(['preset_unavailable', 'worldbook_unavailable']));
      expect(res.body.data.prompt_snapshot.preset_id).toBeNull();
      expect(res.body.data.assembly.preset_used).toBe(false);
    });
  });

  describe('injections', () => {
    it('request and persistent injections are applied and traced; request ones are never stored', async () => {
      const { session } = await chatSession(1);
      await t.http
        .post(`/sessions/${session.id}/prompt-runtime/injections`)
        .set('x-api-key', ADMIN_KEY)
        .send(injection({ title: 'Stored', content: 'A stored note.', placement: 'after_history' }))
        .expect(201);
      const before = await allRowCounts(t);
      const res = await dryRun(session.id, { message: 'x', prompt_runtime_injections: [injection()] }).expect(
        200,
      );
      expect(await allRowCounts(t)).toEqual(before);
      const contents = res.body.data.messages.map((m: { content: string }) => m.content);
      expect(contents).toContain('It is raining.');
      expect(contents).toContain('A stored note.');
      const items = res.body.data.runtime_trace.injection.items;
      expect(items.map((i: { scope: string }) => i.scope).sort()).toEqual(['request', 'session']);
      expect(res.body.data.runtime_trace.injection).toMatchObject({ requested_count: 2, applied_count: 2 });
    });

    it('32 request injections are accepted; 33 is 400 invalid_injection_payload', async () => {
      const { session } = await chatSession();
      const many = (n: number) =>
        Array.from({ length: n }, (_, i) => injection({ title: `T${i}`, content: `note ${i}` }));
      const ok = await dryRun(session.id, { message: 'x', prompt_runtime_injections: many(32) }).expect(200);
      expect(ok.body.data.runtime_trace.injection.requested_count).toBe(32);
      const bad = await dryRun(session.id, { message: 'x', prompt_runtime_injections: many(33) }).expect(400);
      expect(bad.body.error.code).toBe('invalid_injection_payload');
      expect(bad.body.error.details.fields[0].field).toBe('prompt_runtime_injections');
    });

    it.each([
      ['a source kind other than client_injection', { source_kind: 'agent_injection' }, 'source_kind'],
      ['a scope other than request', { scope: 'session' }, 'scope'],
      ['a title that is not a string', { title: 42 }, 'title'],
      ['a missing content', { content: undefined }, 'content'],
      ['placement_params that are not an object', { placement_params: [1] }, 'placement_params'],
      ['an order that is not an integer', { order: 1.5 }, 'order'],
      ['an unknown field', { colour: 'red' }, 'colour'],
    ])('%s is 400 invalid_injection_payload naming the field', async (_label, overrides, field) => {
      const { session } = await chatSession();
      const res = await dryRun(session.id, {
        message: 'x',
        prompt_runtime_injections: [injection(overrides)],
      }).expect(400);
      expect(res.body.error.code).toBe('invalid_injection_payload');
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(
        `prompt_runtime_injections[0].${field}`,
      );
    });

    it('scope `request` is accepted; problems the engine judges are not_applied_reasons, not errors', async () => {
      const { session } = await chatSession();
      const res = await dryRun(session.id, {
        message: 'x',
        prompt_runtime_injections: [
          injection({ scope: 'request' }),
          injection({ title: '' }),
          injection({ placement: 'nowhere' }),
          injection({ content: 'y'.repeat(8001) }),
          injection({ placement: 'before_floor' }),
        ],
      }).expect(200);
      const reasons = res.body.data.runtime_trace.injection.items.map(
        (i: { not_applied_reason: string | null }) => i.not_applied_reason,
      );
      expect(reasons).toEqual([
        null,
        'empty_title_or_content',
        'unknown_placement',
        'content_length_exceeded',
        'missing_placement_params',
      ]);
    });

    it('token limits: an item of exactly 2000 tokens applies, 2001 is content_token_limit_exceeded (persistent and request)', async () => {
      const { session } = await chatSession();
      const stored = (content: string, title: string) =>
        t.http
          .post(`/sessions/${session.id}/prompt-runtime/injections`)
          .set('x-api-key', ADMIN_KEY)
          .send(injection({ title, content, placement: 'after_history' }))
          .expect(201);
      const atLimit = textOfTokens(2000, 'b');
      const storedOver = textOfTokens(2001, 'c');
      const requestOver = textOfTokens(2001, 'd');
      await stored(atLimit, 'At limit');
      await stored(storedOver, 'Over limit');
      const res = await dryRun(session.id, {
        message: 'x',
        prompt_runtime_injections: [injection({ title: 'Request over', content: requestOver })],
      }).expect(200);
      const trace = res.body.data.runtime_trace.injection;
      expect(trace.items).toEqual([
        expect.objectContaining({
          scope: 'session',
          title: 'At limit',
          token_count: 2000,
          budget_status: 'within_budget',
          applied: true,
          not_applied_reason: null,
        }),
        expect.objectContaining({
          scope: 'session',
          title: 'Over limit',
          token_count: 2001,
          budget_status: 'rejected_by_item_limit',
          applied: false,
          not_applied_reason: 'content_token_limit_exceeded',
        }),
        expect.objectContaining({
          scope: 'request',
          token_count: 2001,
          budget_status: 'rejected_by_item_limit',
          applied: false,
          not_applied_reason: 'content_token_limit_exceeded',
        }),
      ]);
      expect(trace).toMatchObject({
        requested_count: 3,
        applied_count: 1,
        rejected_count: 2,
        token_count: 2000,
      });
      const contents: string[] = res.body.data.messages.map((m: { content: string }) => m.content);
      expect(contents.some((c) => c.includes(atLimit))).toBe(true);
      expect(contents.some((c) => c.includes('c\nc\n') || c.includes('d\nd\n'))).toBe(false);
    });

    it('token limits: exactly 4000 tokens in total apply; the item that would make 4001 is total_token_limit_exceeded', async () => {
      const { session } = await chatSession();
      await t.http
        .post(`/sessions/${session.id}/prompt-runtime/injections`)
        .set('x-api-key', ADMIN_KEY)
        .send(injection({ title: 'Stored', content: textOfTokens(2000, 'b'), placement: 'after_history' }))
        .expect(201);
      const requestItems = [
        injection({ title: 'Second', content: textOfTokens(1999, 'c') }),
        injection({ title: 'Third', content: textOfTokens(1, 'd') }),
      ];
      const exact = await dryRun(session.id, {
        message: 'x',
        prompt_runtime_injections: requestItems,
      }).expect(200);
      const exactTrace = exact.body.data.runtime_trace.injection;
      expect(exactTrace).toMatchObject({ requested_count: 3, applied_count: 3, token_count: 4000 });
      expect(exactTrace.items.map((i: { budget_status: string }) => i.budget_status)).toEqual([
        'within_budget',
        'within_budget',
        'within_budget',
      ]);

      const over = await dryRun(session.id, {
        message: 'x',
        prompt_runtime_injections: [
          ...requestItems,
          injection({ title: 'Fourth', content: textOfTokens(1, 'e') }),
        ],
      }).expect(200);
      const overTrace = over.body.data.runtime_trace.injection;
      expect(overTrace).toMatchObject({ requested_count: 4, applied_count: 3, token_count: 4000 });
      expect(overTrace.items[3]).toMatchObject({
        title: 'Fourth',
        token_count: 1,
        budget_status: 'rejected_by_total_limit',
        applied: false,
        not_applied_reason: 'total_token_limit_exceeded',
      });
      const contents: string[] = over.body.data.messages.map((m: { content: string }) => m.content);
      expect(contents).toContain('d');
      expect(contents).not.toContain('e');
    });

    it('restricted sources are trimmed in the trace: no title, no source chain, restricted true', async () => {
      const { session } = await chatSession();
      await insertRestrictedInjection(t, session, {
        source_kind: 'agent_injection',
        title: 'Secret plan',
        content: 'Agent note.',
      });
      const res = await dryRun(session.id, { message: 'x' }).expect(200);
      const [item] = res.body.data.runtime_trace.injection.items;
      expect(item).toMatchObject({
        source_kind: 'agent_injection',
        visibility: 'agent_private',
        title: null,
        source_chain: null,
        restricted: true,
      });
      expect(JSON.stringify(res.body.data.runtime_trace)).not.toContain('Secret plan');
    });
  });

  describe('errors and access', () => {
    it('404 not_found (spec 2 chat errors: session missing) for a missing session and for another account’s session', async () => {
      const { session } = await chatSession();
      expect((await dryRun('ses_missing', { message: 'x' }).expect(404)).body.error.code).toBe('not_found');
      const res = await dryRun(session.id, { message: 'x' }, other.apiKey).expect(404);
      expect(res.body.error.code).toBe('not_found');
      expect(JSON.stringify(res.body)).not.toContain('Aria');
    });

    it('a member of the Project (observer) may dry-run', async () => {
      const { session } = await chatSession(1);
      await addMember(t, (await findProject(t, session.project_id))!, observer, 'observer');
      const res = await dryRun(session.id, { message: 'x' }, observer.apiKey).expect(200);
      expect(res.body.data.messages.at(-1)).toEqual({ role: 'user', content: 'x' });
    });

    it('404 branch_not_found for an unknown branch and a branch of another session', async () => {
      const { session } = await chatSession(1);
      const { session: second, floors } = await chatSession(1);
      const foreign = await t.http
        .post(`/floors/${floors[0].id}/branch`)
        .set('x-api-key', ADMIN_KEY)
        .send({})
        .expect(201);
      for (const branchId of ['br_missing', foreign.body.data.branch_id]) {
        const res = await dryRun(session.id, { message: 'x', branch_id: branchId }).expect(404);
        expect(res.body.error.code).toBe('branch_not_found');
      }
      expect(second.id).not.toBe(session.id);
    });

    it('404 source_floor_not_found: unknown, of another session, or not in the branch’s lineage', async () => {
      const { session, floors } = await chatSession(2);
      const { floors: foreignFloors } = await chatSession(1);
      const branched = await t.http
        .post(`/floors/${floors[0].id}/branch`)
        .set('x-api-key', ADMIN_KEY)
        .send({})
        .expect(201);
      const cases: Array<[string, string | undefined]> = [
        ['flr_missing', undefined],
        [foreignFloors[0].id, undefined],
        [floors[1].id, branched.body.data.branch_id],
      ];
      for (const [floorId, branchId] of cases) {
        const res = await dryRun(session.id, {
          message: 'x',
          source_floor_id: floorId,
          ...(branchId ? { branch_id: branchId } : {}),
        }).expect(404);
        expect(res.body.error.code).toBe('source_floor_not_found');
      }
      // The fork source is in the branch's lineage.
      await dryRun(session.id, {
        message: 'x',
        source_floor_id: floors[0].id,
        branch_id: branched.body.data.branch_id,
      }).expect(200);
    });

    it.each([
      ['a missing message', {}],
      ['a blank message', { message: '   ' }],
      ['a message that is not a string', { message: 5 }],
      ['an unknown prompt_intent', { message: 'x', prompt_intent: 'shout' }],
      ['an unknown field', { message: 'x', session_state_writes: [] }],
      ['a bad budget value', { message: 'x', budget: { max_input_tokens: 'lots' } }],
      ['an unknown source_selection key', { message: 'x', source_selection: { tools: true } }],
      ['a non-boolean debug option', { message: 'x', debug_options: { include_worldbook_matches: 'yes' } }],
    ])('%s is 400 validation_error', async (_label, body) => {
      const { session } = await chatSession();
      const res = await dryRun(session.id, body).expect(400);
      expect(res.body.error.code).toBe('validation_error');
    });

    it('message length: 200,000 characters are accepted, 200,001 are 400', async () => {
      const { session } = await chatSession();
      await dryRun(session.id, { message: 'word '.repeat(40_000) }).expect(200);
      const res = await dryRun(session.id, { message: 'a'.repeat(200_001) }).expect(400);
      expect(res.body.error.code).toBe('validation_error');
    });
  });
});

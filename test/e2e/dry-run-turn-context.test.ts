import { loadTurnContext, turnSeed } from '@hearth/app';
import type { Actor } from '@hearth/permissions';
import type { SessionRow } from '@hearth/persistence';
import { accountActor } from '../support/factories/accounts';
import { characterCard, importCharacter } from '../support/factories/characters';
import { appendTurns } from '../support/factories/conversation';
import { addMember, createAccountCaller, defaultCaller, type Caller } from '../support/factories/members';
import { importPreset, importRegexProfile, presetFile, regexScript } from '../support/factories/presets';
import { findProject } from '../support/factories/projects';
import { createSession, findSessionRow } from '../support/factories/sessions';
import { createUserCard } from '../support/factories/user-cards';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

jest.setTimeout(60_000);

/** `loadTurnContext`, the loader the turn routes share, on a real database. */
describe('loadTurnContext', () => {
  let t: TestApp;
  let owner: Actor;
  let observer: Caller;
  const db = () => t.resources.database.db;

  beforeAll(async () => {
    t = await startTestApp();
    owner = accountActor(await defaultCaller(t, ADMIN_KEY));
    observer = await createAccountCaller(t, { name: 'Observer' });
  });
  afterAll(async () => {
    await t.close();
  });

  const sessionWith = async (body: Record<string, unknown>): Promise<SessionRow> =>
    (await findSessionRow(t, (await createSession(t, { body })).id))!;

  it('loads persona, pinned character version, preset file, and regex scripts of three scopes', async () => {
    const character = await importCharacter(t, {
      payload: characterCard({
        name: 'Mira',
        first_mes: 'Greetings.',
        extensions: { regex_scripts: [regexScript({ scriptName: 'card rule' })] },
      }),
    });
    await t.http
      .patch(`/characters/${character.id}`)
      .set('x-api-key', ADMIN_KEY)
      .send({ data: { description: 'Changed later.' } })
      .expect(200);
    const preset = await importPreset(t, ADMIN_KEY, {
      name: `P ${Date.now()}`,
      data: presetFile({ extensions: { regex_scripts: [regexScript({ scriptName: 'preset rule' })] } }),
    });
    const profile = await importRegexProfile(t, ADMIN_KEY, {
      name: `R ${Date.now()}`,
      data: [regexScript({ scriptName: 'global rule' })],
    });
    const persona = await createUserCard(t, ADMIN_KEY, {
      name: `Tess ${Date.now()}`,
      description: 'A wanderer.',
    });
    const session = await sessionWith({
      character_id: character.id,
      character_version_id: character.versionId,
      preset_id: preset.id,
      regex_profile_id: profile.id,
      user_card_id: persona.id,
    });
    const ctx = await loadTurnContext(db(), owner, {
      sessionId: session.id,
      intent: 'normal',
      userInput: 'hi',
    });
    const input = ctx.engineInput;
    expect(input.user).toEqual({
      name: persona.snapshot.name,
      description: 'A wanderer.',
      position: 'in_prompt',
      depth: 2,
      role: 'system',
    });
    // Nothing written: ST's default note (empty, every message, in chat at depth 4, system).
    expect(input.authors_note).toEqual({
      prompt: '',
      interval: 1,
      depth: 4,
      position: 'in_chat',
      role: 'system',
    });
    expect(input.character).toMatchObject({ id: character.id, version_id: character.versionId });
    expect(input.character?.data.description).toBe('A character of the tests.');
    expect(input.preset).toMatchObject({ id: preset.id, version: 1 });
    expect((input.preset?.data as Record<string, unknown>).openai_max_context).toBe(8192);
    expect(input.regex?.scripts.map((s) => [s.scope, s.script.scriptName])).toEqual([
      ['global', 'global rule'],
      ['preset', 'preset rule'],
      ['character', 'card rule'],
    ]);
    expect(input.history.map((m) => [m.role, m.name, m.content])).toEqual([
      ['assistant', 'Mira', 'Greetings.'],
    ]);
    expect(input.history[0].token_count).toEqual(expect.any(Number));
    expect(ctx.nextFloorNo).toBe(1);
    expect(ctx.warnings).toEqual([]);
  });

  it('without a pinned version the latest version of the character is used', async () => {
    const character = await importCharacter(t, { payload: characterCard({ name: 'Lin' }) });
    const session = await sessionWith({ character_id: character.id });
    await t.http
      .patch(`/sessions/${session.id}`)
      .set('x-api-key', ADMIN_KEY)
      .send({ character_version_id: null })
      .expect(200);
    expect((await findSessionRow(t, session.id))?.character_version_id).toBeNull();
    await t.http
      .patch(`/characters/${character.id}`)
      .set('x-api-key', ADMIN_KEY)
      .send({ data: { description: 'The newest description.' } })
      .expect(200);
    const ctx = await loadTurnContext(db(), owner, {
      sessionId: session.id,
      intent: 'normal',
      userInput: 'x',
    });
    expect(ctx.engineInput.character?.data.description).toBe('The newest description.');
    expect(ctx.engineInput.character?.version_id).not.toBe(character.versionId);
  });

  it('the seed is stable for a state, differs per attempt and per parent floor', async () => {
    const session = await sessionWith({});
    const [first, second] = await appendTurns(t, session, 2);
    const load = (extra: Record<string, unknown>) =>
      loadTurnContext(db(), owner, { sessionId: session.id, intent: 'normal', userInput: 'x', ...extra });
    const a = await load({});
    const b = await load({});
    expect(b.engineInput.seed).toBe(a.engineInput.seed);
    expect(a.engineInput.seed).toBe(turnSeed(session.id, a.branch.id, second.id, null));
    expect((await load({ attemptId: 'pg_retry' })).engineInput.seed).not.toBe(a.engineInput.seed);
    const fromFirst = await load({ sourceFloorId: first.id });
    expect(fromFirst.engineInput.seed).not.toBe(a.engineInput.seed);
    expect(fromFirst.parentFloor?.id).toBe(first.id);
    expect(fromFirst.nextFloorNo).toBe(first.floor_no + 1);
  });

  it('the parent floor’s stored timed-effect state is the turn’s starting state', async () => {
    const session = await sessionWith({});
    const [floor] = await appendTurns(t, session, 1);
    const timed = { sticky: { 'wb.1': { hash: 1, start: 0, end: 3, protected: false } }, cooldown: {} };
    await db()
      .updateTable('floors')
      .set({ state_snapshot: JSON.stringify({ timed_state: timed }) })
      .where('id', '=', floor.id)
      .execute();
    const ctx = await loadTurnContext(db(), owner, {
      sessionId: session.id,
      intent: 'normal',
      userInput: 'x',
    });
    expect(ctx.engineInput.timed_state).toEqual(timed);
  });

  it('session and branch policies and the request override become layers, in that order', async () => {
    const session = await sessionWith({});
    const [floor] = await appendTurns(t, session, 1);
    await t.http
      .patch(`/sessions/${session.id}/prompt-runtime/policy`)
      .set('x-api-key', ADMIN_KEY)
      .send({ budget: { max_input_tokens: 9000 } })
      .expect(200);
    await t.http
      .patch(`/sessions/${session.id}/prompt-runtime/branches/${floor.branch_id}/policy`)
      .set('x-api-key', ADMIN_KEY)
      .send({ structure: { mode: 'flattened' } })
      .expect(200);
    const ctx = await loadTurnContext(db(), owner, {
      sessionId: session.id,
      intent: 'normal',
      userInput: 'x',
      policyOverride: { budget: { reserved_completion_tokens: 100 } },
    });
    expect(ctx.engineInput.policy_layers).toEqual([
      { source: 'session_policy', value: { budget: { max_input_tokens: 9000 } } },
      { source: 'branch_policy', value: { structure: { mode: 'flattened' } } },
      { source: 'request_override', value: { budget: { reserved_completion_tokens: 100 } } },
    ]);
  });

  it('write access (respond) needs project.session.write: a member observer gets 403; read access works for it', async () => {
    const session = await sessionWith({});
    await addMember(t, (await findProject(t, session.project_id))!, observer, 'observer');
    const observerActor = accountActor(observer);
    const read = await loadTurnContext(db(), observerActor, {
      sessionId: session.id,
      intent: 'normal',
      userInput: 'x',
    });
    expect(read.role).toBe('observer');
    await expect(
      loadTurnContext(db(), observerActor, {
        sessionId: session.id,
        intent: 'normal',
        userInput: 'x',
        access: 'write',
      }),
    ).rejects.toMatchObject({ code: 'project_access_denied', status: 403 });
    const stranger = accountActor(await createAccountCaller(t, { name: 'Stranger' }));
    await expect(
      loadTurnContext(db(), stranger, { sessionId: session.id, intent: 'normal', userInput: 'x' }),
    ).rejects.toMatchObject({ code: 'not_found', status: 404 });
    await expect(
      loadTurnContext(db(), stranger, {
        sessionId: session.id,
        intent: 'normal',
        userInput: 'x',
        sessionNotFoundCode: 'session_not_found',
      }),
    ).rejects.toMatchObject({ code: 'session_not_found', status: 404 });
  });

  it('the model comes from the `llm` configuration, or is null', async () => {
    const session = await sessionWith({});
    const none = await loadTurnContext(
      db(),
      owner,
      { sessionId: session.id, intent: 'normal', userInput: 'x' },
      { config: null },
    );
    expect(none.model).toBeNull();
    expect(none.engineInput.provider).toEqual({ kind: null, model_id: null });
    const configured = await loadTurnContext(
      db(),
      owner,
      { sessionId: session.id, intent: 'normal', userInput: 'x' },
      {
        config: {
          llm: { provider: 'openai', model: 'gpt-4o-mini', baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'k' },
        },
      },
    );
    expect(configured.model).toEqual({
      provider: 'openai',
      model_id: 'gpt-4o-mini',
      base_url: 'http://127.0.0.1:9/v1',
    });
    expect(configured.engineInput.provider).toEqual({ kind: 'openai', model_id: 'gpt-4o-mini' });
  });
});

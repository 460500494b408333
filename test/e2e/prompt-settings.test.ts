import { postProcessPrompt } from '@hearth/domain/prompt/assembly/post-processing';
import { DEFAULT_LOREBOOK_SETTINGS } from '@hearth/domain/prompt/lorebook';
import { operationLogsRepository, type SessionRow } from '@hearth/persistence';
import {
  addMember,
  createAccountCaller,
  createClientCaller,
  type Caller,
} from '../support/factories/members';
import { archiveProject, findProject } from '../support/factories/projects';
import { createSession, findSessionRow } from '../support/factories/sessions';
import { createGoldenSession, goldenUserMessage, readGolden } from '../support/factories/turn-context';
import { importWorldbook } from '../support/factories/worldbooks';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

jest.setTimeout(60_000);

const DEFAULTS = {
  prompt_mode: 'compat_strict',
  macro_engine: 'v2',
  post_processing: 'none',
  timezone: 'UTC',
  persona_position: 'in_prompt',
  persona_depth: 2,
  persona_role: 'system',
  lorebook: { ...DEFAULT_LOREBOOK_SETTINGS },
  authors_note: { prompt: '', interval: 1, depth: 4, position: 'in_chat', role: 'system' },
};
const UNSET = {
  prompt_mode: null,
  macro_engine: null,
  post_processing: null,
  timezone: null,
  persona_position: null,
  persona_depth: null,
  persona_role: null,
  lorebook: {},
  authors_note: {},
};

describe('GET/PUT /sessions/:id/prompt-runtime/mode (session prompt settings)', () => {
  let t: TestApp;
  let other: Caller;
  let observer: Caller;

  const db = () => t.resources.database.db;
  const newSession = async (): Promise<SessionRow> => (await findSessionRow(t, (await createSession(t)).id))!;
  const url = (s: { id: string }) => `/sessions/${s.id}/prompt-runtime/mode`;
  const get = (s: { id: string }, key = ADMIN_KEY) => t.http.get(url(s)).set('x-api-key', key);
  const put = (s: { id: string }, body: unknown, key = ADMIN_KEY) =>
    t.http
      .put(url(s))
      .set('x-api-key', key)
      .send(body as object);
  const logs = async (sessionId: string) =>
    (
      await operationLogsRepository.list(
        db(),
        { accountId: 'default', filters: { session_id: sessionId } },
        { limit: 500, offset: 0, sortOrder: 'asc' },
      )
    ).filter((l) => l.action === 'update_prompt_settings');
  const rows = (sessionId: string) =>
    db().selectFrom('session_prompt_settings').selectAll().where('session_id', '=', sessionId).execute();
  const dryRun = (sessionId: string, body: Record<string, unknown>) =>
    t.http.post(`/sessions/${sessionId}/respond/dry-run`).set('x-api-key', ADMIN_KEY).send(body);

  beforeAll(async () => {
    t = await startTestApp();
    other = await createAccountCaller(t, { name: 'Other' });
    observer = await createAccountCaller(t, { name: 'Observer' });
  });
  afterAll(async () => {
    await t.close();
  });

  describe('reads and writes', () => {
    it('GET of a never-written session: nothing set, SillyTavern’s shipped defaults effective, version 0', async () => {
      const s = await newSession();
      const res = await get(s).expect(200);
      expect(res.body.data).toEqual({
        session_id: s.id,
        settings: UNSET,
        effective: DEFAULTS,
        sources: expect.objectContaining({ prompt_mode: 'default', 'lorebook.scanDepth': 'default' }),
        version: 0,
        updated_at: null,
        updated_by: null,
      });
      expect(new Set(Object.values(res.body.data.sources))).toEqual(new Set(['default']));
      expect(await rows(s.id)).toEqual([]);
    });

    it('PUT is partial: sent fields set, absent stay, null resets; lorebook merges key by key; each change bumps the version and logs field names', async () => {
      const s = await newSession();
      const first = await put(s, {
        prompt_mode: 'compat_plus',
        post_processing: 'strict',
        timezone: 'Europe/Berlin',
        lorebook: { scanDepth: 4, recursive: false },
      }).expect(200);
      expect(first.body.data.settings).toEqual({
        ...UNSET,
        prompt_mode: 'compat_plus',
        post_processing: 'strict',
        timezone: 'Europe/Berlin',
        lorebook: { scanDepth: 4, recursive: false },
      });
      expect(first.body.data.effective).toEqual({
        ...DEFAULTS,
        prompt_mode: 'compat_plus',
        post_processing: 'strict',
        timezone: 'Europe/Berlin',
        lorebook: { ...DEFAULT_LOREBOOK_SETTINGS, scanDepth: 4, recursive: false },
      });
      expect(first.body.data.sources).toMatchObject({
        prompt_mode: 'session',
        macro_engine: 'default',
        'lorebook.scanDepth': 'session',
        'lorebook.budgetPercent': 'default',
      });
      expect(first.body.data).toMatchObject({ version: 1, updated_by: 'default' });
      expect(first.body.data.updated_at).toEqual(expect.any(Number));

      const second = await put(s, {
        macro_engine: 'classic',
        timezone: null,
        lorebook: { scanDepth: null, characterStrategy: 'evenly' },
      }).expect(200);
      expect(second.body.data.settings).toEqual({
        ...UNSET,
        prompt_mode: 'compat_plus',
        macro_engine: 'classic',
        post_processing: 'strict',
        lorebook: { recursive: false, characterStrategy: 'evenly' },
      });
      expect(second.body.data.effective.timezone).toBe('UTC');
      expect(second.body.data.version).toBe(2);

      const third = await put(s, { lorebook: null, persona_position: 'none' }).expect(200);
      expect(third.body.data.settings.lorebook).toEqual({});
      expect(third.body.data.effective.lorebook).toEqual(DEFAULT_LOREBOOK_SETTINGS);
      expect(third.body.data.effective.persona_position).toBe('none');
      expect(third.body.data.version).toBe(3);

      expect((await get(s).expect(200)).body.data).toEqual(third.body.data);
      const written = await logs(s.id);
      expect(written.map((l) => [l.before_ref, l.after_ref])).toEqual([
        [{ version: 0 }, { version: 1 }],
        [{ version: 1 }, { version: 2 }],
        [{ version: 2 }, { version: 3 }],
      ]);
      expect(written[0]).toMatchObject({
        session_id: s.id,
        project_id: s.project_id,
        target_type: 'session_prompt_settings',
        target_id: s.id,
        metadata: {
          changed_fields: [
            'prompt_mode',
            'post_processing',
            'timezone',
            'lorebook.recursive',
            'lorebook.scanDepth',
          ],
        },
      });
      // Values of free text never reach the log.
      expect(JSON.stringify(written)).not.toContain('Europe/Berlin');
    });

    it('a PUT that changes nothing writes nothing (no version, no log)', async () => {
      const s = await newSession();
      await put(s, { post_processing: 'merge' }).expect(200);
      const same = await put(s, { post_processing: 'merge', lorebook: {} }).expect(200);
      expect(same.body.data.version).toBe(1);
      // Resetting what was never set changes nothing either.
      const untouched = await newSession();
      await put(untouched, { macro_engine: null }).expect(200);
      expect(await rows(untouched.id)).toEqual([]);
      expect(await logs(s.id)).toHaveLength(1);
      expect(await logs(untouched.id)).toHaveLength(0);
    });

    it('expected_version: a stale writer gets 409 prompt_settings_conflict; the current version writes', async () => {
      const s = await newSession();
      await put(s, { prompt_mode: 'native', expected_version: 0 }).expect(200);
      const stale = await put(s, { prompt_mode: 'compat_plus', expected_version: 0 }).expect(409);
      expect(stale.body.error).toMatchObject({
        code: 'prompt_settings_conflict',
        details: { expected_version: 0, current_version: 1 },
      });
      await put(s, { prompt_mode: 'compat_plus', expected_version: 1 }).expect(200);
      expect((await get(s)).body.data).toMatchObject({
        version: 2,
        settings: { prompt_mode: 'compat_plus' },
      });
      expect(
        (await put(s, { prompt_mode: 'native', expected_version: -1 }).expect(400)).body.error.code,
      ).toBe('validation_error');
    });

    it('every enum value is accepted (all post-processing types of ST, both macro engines, three prompt modes)', async () => {
      const s = await newSession();
      for (const post_processing of [
        'none',
        'merge',
        'merge_tools',
        'semi',
        'semi_tools',
        'strict',
        'strict_tools',
        'single',
      ]) {
        const res = await put(s, { post_processing }).expect(200);
        expect(res.body.data.effective.post_processing).toBe(post_processing);
      }
      for (const macro_engine of ['classic', 'v2']) await put(s, { macro_engine }).expect(200);
      for (const prompt_mode of ['compat_strict', 'compat_plus', 'native'])
        await put(s, { prompt_mode }).expect(200);
      for (const persona_position of ['in_prompt', 'top_an', 'bottom_an', 'at_depth', 'none'])
        await put(s, { persona_position }).expect(200);
    });
  });

  describe('validation (400 validation_error naming the field)', () => {
    const fieldsOf = (res: { body: { error: { details?: { fields?: Array<{ field: string }> } } } }) =>
      (res.body.error.details?.fields ?? []).map((f) => f.field);

    it('a body without any setting, or with an unknown top-level field', async () => {
      const s = await newSession();
      const empty = await put(s, {}).expect(400);
      expect(empty.body.error.code).toBe('validation_error');
      expect(fieldsOf(empty)).toContain('prompt_mode');
      const onlyVersion = await put(s, { expected_version: 0 }).expect(400);
      expect(onlyVersion.body.error.code).toBe('validation_error');
      const unknown = await put(s, { prompt_mode: 'native', mode: 'x' }).expect(400);
      expect(unknown.body.error.code).toBe('validation_error');
      expect(await rows(s.id)).toEqual([]);
    });

    it.each([
      ['prompt_mode', 'compat'],
      ['macro_engine', 'new'],
      ['post_processing', 'STRICT'],
      ['post_processing', 'claude'],
      ['persona_position', 'after_char'],
      ['timezone', 'Mars/Olympus'],
      ['timezone', ''],
      ['timezone', 5],
      ['lorebook', [1]],
      ['lorebook', 'deep'],
    ])('%s = %j', async (field, value) => {
      const s = await newSession();
      const res = await put(s, { [field]: value }).expect(400);
      expect(res.body.error.code).toBe('validation_error');
      expect(fieldsOf(res)).toEqual([field]);
    });

    it.each([
      ['scanDepth', 1000, 1001],
      ['minActivations', 100, 101],
      ['minActivationsDepthMax', 100, 101],
      ['budgetPercent', 100, 101],
      ['budgetPercent', 1, 0],
      ['budgetCap', 65536, 65537],
      ['maxRecursionSteps', 10, 11],
      ['scanDepth', 0, -1],
    ])('lorebook.%s: %j accepted, %j refused', async (key, ok, bad) => {
      const s = await newSession();
      const accepted = await put(s, { lorebook: { [key]: ok } }).expect(200);
      expect(accepted.body.data.effective.lorebook[key]).toBe(ok);
      const refused = await put(s, { lorebook: { [key]: bad } }).expect(400);
      expect(fieldsOf(refused)).toEqual([`lorebook.${key}`]);
      expect((await get(s)).body.data.settings.lorebook[key]).toBe(ok);
    });

    it('lorebook: unknown keys, wrong types and a bad strategy, each named', async () => {
      const s = await newSession();
      const res = await put(s, {
        lorebook: { depth: 3, includeNames: 'yes', scanDepth: 2.5, characterStrategy: 'random' },
      }).expect(400);
      expect(fieldsOf(res).sort()).toEqual(
        [
          'lorebook.characterStrategy',
          'lorebook.depth',
          'lorebook.includeNames',
          'lorebook.scanDepth',
        ].sort(),
      );
      expect(await rows(s.id)).toEqual([]);
    });
  });

  describe('access', () => {
    it('404 session_not_found for a missing session, another account and a non-member Client; nothing written', async () => {
      const s = await newSession();
      for (const res of [
        await get({ id: 'ses_missing' }).expect(404),
        await put({ id: 'ses_missing' }, { prompt_mode: 'native' }).expect(404),
        await get(s, other.apiKey).expect(404),
        await put(s, { prompt_mode: 'native' }, other.apiKey).expect(404),
      ]) {
        expect(res.body.error.code).toBe('session_not_found');
      }
      const client = await createClientCaller(t, 'default');
      expect((await get(s, client.apiKey).expect(404)).body.error.code).toBe('session_not_found');
      expect((await put(s, { prompt_mode: 'native' }, client.apiKey).expect(404)).body.error.code).toBe(
        'session_not_found',
      );
      expect(await rows(s.id)).toEqual([]);
    });

    it('a member (observer) reads; writing is 403 project_access_denied', async () => {
      const s = await newSession();
      await addMember(t, (await findProject(t, s.project_id))!, observer, 'observer');
      await put(s, { post_processing: 'semi' }).expect(200);
      const read = await get(s, observer.apiKey).expect(200);
      expect(read.body.data.settings.post_processing).toBe('semi');
      const res = await put(s, { post_processing: 'strict' }, observer.apiKey).expect(403);
      expect(res.body.error.code).toBe('project_access_denied');
      expect((await rows(s.id)).map((r) => [r.version, r.post_processing])).toEqual([[1, 'semi']]);
    });

    it('an archived session or Project can be read but not written (409)', async () => {
      const s = await newSession();
      await t.http
        .patch(`/sessions/${s.id}`)
        .set('x-api-key', ADMIN_KEY)
        .send({ status: 'archived' })
        .expect(200);
      await get(s).expect(200);
      expect((await put(s, { prompt_mode: 'native' }).expect(409)).body.error.code).toBe('session_archived');
      const p = await newSession();
      await archiveProject(t, p.project_id);
      await get(p).expect(200);
      expect((await put(p, { prompt_mode: 'native' }).expect(409)).body.error.code).toBe('project_archived');
      expect(await rows(s.id)).toEqual([]);
      expect(await rows(p.id)).toEqual([]);
    });

    it('settings go with their session', async () => {
      const s = await newSession();
      await put(s, { prompt_mode: 'native' }).expect(200);
      await t.http
        .delete(`/sessions/${s.id}`)
        .set('x-api-key', ADMIN_KEY)
        .expect((r) => {
          expect([200, 204]).toContain(r.status);
        });
      expect(await rows(s.id)).toEqual([]);
    });

    it('documents the route in /openapi.json', async () => {
      const doc = await t.http.get('/openapi.json').expect(200);
      expect(Object.keys(doc.body.paths['/sessions/{id}/prompt-runtime/mode'] ?? {}).sort()).toEqual([
        'get',
        'put',
      ]);
    });
  });

  describe('turns read the settings', () => {
    const golden = () => readGolden('request.json').messages;

    it('the golden dry-run is unchanged with nothing set, and with ST’s defaults written explicitly', async () => {
      const g = await createGoldenSession(t, ADMIN_KEY);
      const plain = await dryRun(g.sessionId, { message: goldenUserMessage() }).expect(200);
      expect(plain.body.data.messages).toEqual(golden());
      expect(plain.body.data.runtime_trace.post_processing.mode).toBe('none');
      await put(
        { id: g.sessionId },
        {
          prompt_mode: 'compat_strict',
          macro_engine: 'v2',
          post_processing: 'none',
          persona_position: 'in_prompt',
          lorebook: { ...DEFAULT_LOREBOOK_SETTINGS },
        },
      ).expect(200);
      const explicit = await dryRun(g.sessionId, { message: goldenUserMessage() }).expect(200);
      expect(explicit.body.data.messages).toEqual(golden());
    });

    it('post_processing strict: the dry-run sends what ST’s server makes of the golden request', async () => {
      const g = await createGoldenSession(t, ADMIN_KEY);
      await put({ id: g.sessionId }, { post_processing: 'strict' }).expect(200);
      const res = await dryRun(g.sessionId, { message: goldenUserMessage() }).expect(200);
      const expected = postProcessPrompt(golden(), 'strict', { charName: 'Seraphina', userName: 'User' });
      expect(res.body.data.messages).toEqual(expected.messages);
      expect(res.body.data.messages[1]).toEqual({ role: 'user', content: '[Start a new chat]' });
      expect(res.body.data.messages.slice(1).some((m: { role: string }) => m.role === 'system')).toBe(false);
      expect(res.body.data.runtime_trace.post_processing).toEqual(expected.trace);
    });

    it('prompt_mode compat_plus enables a worldbook_after injection that compat_strict refuses', async () => {
      const g = await createGoldenSession(t, ADMIN_KEY);
      const body = {
        message: goldenUserMessage(),
        prompt_runtime_injections: [
          {
            source_kind: 'client_injection',
            title: 'After lore',
            content: 'INJECTED AFTER THE LOREBOOK',
            placement: 'worldbook_after',
          },
        ],
      };
      const strict = await dryRun(g.sessionId, body).expect(200);
      expect(strict.body.data.prompt_snapshot.prompt_mode).toBe('compat_strict');
      expect(strict.body.data.runtime_trace.injection.items[0]).toMatchObject({ applied: false });
      expect(strict.body.data.runtime_trace.injection.items[0].not_applied_reason).toEqual(
        expect.any(String),
      );
      expect(JSON.stringify(strict.body.data.messages)).not.toContain('INJECTED AFTER THE LOREBOOK');

      await put({ id: g.sessionId }, { prompt_mode: 'compat_plus' }).expect(200);
      const plus = await dryRun(g.sessionId, body).expect(200);
      expect(plus.body.data.prompt_snapshot.prompt_mode).toBe('compat_plus');
      expect(plus.body.data.runtime_trace.injection.items[0]).toMatchObject({
        applied: true,
        not_applied_reason: null,
      });
      expect(JSON.stringify(plus.body.data.messages)).toContain('INJECTED AFTER THE LOREBOOK');
    });

    it('macro_engine classic reaches the turn (the preview route reports the engine it ran)', async () => {
      const g = await createGoldenSession(t, ADMIN_KEY);
      const preview = (text: string) =>
        t.http
          .post(`/sessions/${g.sessionId}/prompt-runtime/preview`)
          .set('x-api-key', ADMIN_KEY)
          .send({ text })
          .expect(200);
      expect((await preview('{{char}}')).body.data.macro_engine).toBe('v2');
      await put({ id: g.sessionId }, { macro_engine: 'classic' }).expect(200);
      const res = await preview('{{char}}');
      expect(res.body.data.macro_engine).toBe('classic');
      expect(res.body.data.expanded_text).toBe('Seraphina');
    });

    it('lorebook settings: the session’s scanDepth 0 stops message matches; a book-level scanDepth wins over it', async () => {
      const g = await createGoldenSession(t, ADMIN_KEY);
      const before = await dryRun(g.sessionId, { message: goldenUserMessage() }).expect(200);
      expect(before.body.data.prompt_snapshot.worldbook_activated_entry_uids.length).toBeGreaterThan(0);
      await put({ id: g.sessionId }, { lorebook: { scanDepth: 0 } }).expect(200);
      const shallow = await dryRun(g.sessionId, { message: goldenUserMessage() }).expect(200);
      expect(shallow.body.data.prompt_snapshot.worldbook_activated_entry_uids).toEqual([]);

      // The same book with a book-level scanDepth (spec 3 global field) bound instead: the book's value wins.
      const withDepth = await importWorldbook(
        t,
        ADMIN_KEY,
        { ...readGolden('inputs', 'worldbooks', 'Eldoria.st-1.18.0.json'), scanDepth: 2 },
        'Eldoria',
      );
      await t.http
        .patch(`/sessions/${g.sessionId}`)
        .set('x-api-key', ADMIN_KEY)
        .send({ worldbook_ids: [withDepth.id] })
        .expect(200);
      const bookWins = await dryRun(g.sessionId, { message: goldenUserMessage() }).expect(200);
      expect(bookWins.body.data.prompt_snapshot.worldbook_activated_entry_uids).toEqual(
        before.body.data.prompt_snapshot.worldbook_activated_entry_uids,
      );
      expect(bookWins.body.data.messages).toEqual(golden());
    });
  });
});

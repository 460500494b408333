import { REGEX_IMPORT_MAX_PATTERN_UNITS, REGEX_IMPORT_MAX_SCRIPTS, USER_REGEX_LIMITS } from '@hearth/domain';
import { operationLogsRepository } from '@hearth/persistence';
import { expectFieldEquivalent } from '../../libs/domain/src/formats/format.test-support';
import { createAccountCaller, createClientCaller, type Caller } from '../support/factories/members';
import {
  assetVersionsOf,
  fixtureText,
  importRegexProfile,
  presetRegexStorage,
  regexFixtureNames,
  regexScript,
} from '../support/factories/presets';
import { startTestApp, type TestApp } from '../support/test-app';

const NO_SCRIPTS_REPORT = {
  stored_count: 0,
  prompt_executable_count: 0,
  persist_executable_count: 0,
  display_only_count: 0,
  unsupported_runtime_count: 0,
  contains_prompt_only: false,
  contains_run_on_edit: false,
  contains_reasoning: false,
  contains_slash_command: false,
};

/**
 * Regex profiles (issue 3 item 2, spec 3 "POST /import/regex", "GET /export/regex/:id", library
 * conventions): import with compat_report, export as an array with safe defaults, versions, rollback,
 * soft delete, logs, every error code, isolation.
 */
describe('Regex profiles', () => {
  let t: TestApp;
  let owner: Caller;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createAccountCaller(t, { name: 'Regex owner' });
  });
  afterAll(async () => {
    await t.close();
  });

  const get = (path: string, key = owner.apiKey) => t.http.get(path).set('x-api-key', key);
  const post = (path: string, body: unknown, key = owner.apiKey) =>
    t.http
      .post(path)
      .set('x-api-key', key)
      .send(body as object);
  const put = (path: string, body: unknown, key = owner.apiKey) =>
    t.http
      .put(path)
      .set('x-api-key', key)
      .send(body as object);
  const logsOf = (targetId: string) =>
    operationLogsRepository.list(
      t.resources.database.db,
      { accountId: owner.accountId, filters: { target_id: targetId } },
      { limit: 200, offset: 0, sortOrder: 'asc' },
    );

  describe.each(regexFixtureNames())('fixture %s', (fixture) => {
    it('imports (one script object) and exports back an array holding the same script, key order kept', async () => {
      const original = JSON.parse(fixtureText('regex', fixture)) as Record<string, unknown>;
      const res = await post('/import/regex', { data: original });
      expect(res.status).toBe(201);
      expect(res.body.data).toEqual({
        id: expect.stringMatching(/^rgx_/),
        name: original.scriptName,
        source: 'ext_frontend',
        version_no: 1,
        latest_version_id: expect.stringMatching(/^rgxv_/),
        script_count: 1,
        compat_report: {
          stored_count: 1,
          prompt_executable_count: 0,
          persist_executable_count: 1,
          display_only_count: 0,
          unsupported_runtime_count: 0,
          contains_prompt_only: false,
          contains_run_on_edit: true,
          contains_reasoning: false,
          contains_slash_command: false,
        },
        created_at: expect.any(Number),
        updated_at: expect.any(Number),
      });
      const exported = await get(`/export/regex/${res.body.data.id}`);
      expect(exported.status).toBe(200);
      expect(exported.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(exported.headers['content-disposition']).toMatch(/^attachment; filename=".+\.json"/);
      const file = JSON.parse(exported.text) as unknown[];
      expect(Array.isArray(file)).toBe(true);
      expect(file).toHaveLength(1);
      expectFieldEquivalent(file[0], original);
      expect(JSON.stringify(file[0])).toBe(JSON.stringify(original));
      // The exported array imports again to the same scripts.
      const again = await post('/import/regex', { name: 'again', data: file });
      expect(again.status).toBe(201);
      expect((await get(`/export/regex/${again.body.data.id}`)).body).toEqual(file);
    });
  });

  it('fills safe defaults for missing legacy fields on export, keeping unknown fields and {{macros}}', async () => {
    const legacy = {
      scriptName: 'Legacy',
      findRegex: '{{char}}',
      replaceString: 'Hi {{user}}',
      custom: { a: 1 },
    };
    const wrapped = { scriptName: 'Wrapped', findRegex: '/x/', placement: 2, substituteRegex: true };
    const res = await post('/import/regex', { name: 'Legacy set', data: [legacy, wrapped] });
    expect(res.status).toBe(201);
    const exported = (await get(`/export/regex/${res.body.data.id}`)).body as Array<Record<string, unknown>>;
    expect(exported[0]).toEqual({
      ...legacy,
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-a[0-9a-f]{3}-[0-9a-f]{12}$/),
      trimStrings: [],
      placement: [],
      disabled: false,
      markdownOnly: false,
      promptOnly: false,
      runOnEdit: false,
      substituteRegex: 0,
      minDepth: null,
      maxDepth: null,
    });
    expect(exported[1]).toMatchObject({ placement: [2], substituteRegex: 1, replaceString: '' });
    // The generated id is stable across exports.
    expect((await get(`/export/regex/${res.body.data.id}`)).body[0].id).toBe(exported[0].id);
    // The stored scripts stay as imported.
    expect((await get(`/regex-profiles/${res.body.data.id}`)).body.data.data).toEqual([legacy, wrapped]);
  });

  it('counts the compat report over mixed scripts', async () => {
    const data = [
      regexScript({ scriptName: 'prompt', promptOnly: true, placement: [1] }),
      regexScript({ scriptName: 'display', markdownOnly: true, placement: [2] }),
      regexScript({ scriptName: 'both flags', markdownOnly: true, promptOnly: true, placement: [2] }),
      regexScript({ scriptName: 'persist', placement: [6], runOnEdit: true }),
      regexScript({ scriptName: 'disabled', disabled: true }),
      regexScript({ scriptName: 'slash only', placement: [3] }),
      regexScript({ scriptName: 'empty find', findRegex: '' }),
      regexScript({ scriptName: 'macro find', findRegex: '/{{char}}(/', substituteRegex: 1 }),
    ];
    const res = await post('/import/regex', { data });
    expect(res.status).toBe(201);
    expect(res.body.data.name).toBe('prompt');
    expect(res.body.data.script_count).toBe(8);
    expect(res.body.data.compat_report).toEqual({
      stored_count: 8,
      // prompt + both flags
      prompt_executable_count: 2,
      // persist, and the macro find (judged only after macro substitution; disabled and unsupported not counted)
      persist_executable_count: 2,
      display_only_count: 1,
      // slash only and empty find
      unsupported_runtime_count: 2,
      contains_prompt_only: true,
      contains_run_on_edit: true,
      contains_reasoning: true,
      contains_slash_command: true,
    });
    expect((await get(`/regex-profiles/${res.body.data.id}`)).body.data.compat_report).toEqual(
      res.body.data.compat_report,
    );
  });

  it('names the profile: given name, else the first scriptName, else Unnamed Regex Profile', async () => {
    const given = await post('/import/regex', { name: 'Given', data: [regexScript()] });
    expect(given.body.data.name).toBe('Given');
    const fromScript = await post('/import/regex', { data: [regexScript({ scriptName: '  Spaced  ' })] });
    expect(fromScript.body.data.name).toBe('Spaced');
    const long = await post('/import/regex', { data: [regexScript({ scriptName: 'L'.repeat(250) })] });
    expect(long.body.data.name).toBe('L'.repeat(200));
    const blank = await post('/import/regex', { data: [regexScript({ scriptName: ' ' })] });
    expect(blank.body.data.name).toBe('Unnamed Regex Profile');
    const empty = await post('/import/regex', { data: [] });
    expect([empty.status, empty.body.data.name, empty.body.data.script_count]).toEqual([
      201,
      'Unnamed Regex Profile',
      0,
    ]);
    expect(empty.body.data.compat_report).toEqual(NO_SCRIPTS_REPORT);
    expect((await get(`/export/regex/${empty.body.data.id}`)).body).toEqual([]);
  });

  describe('bad input answers 400 and stores nothing', () => {
    it('a findRegex that does not compile → import_parse_error naming the script', async () => {
      const before = await presetRegexStorage(t, owner.accountId);
      const res = await post('/import/regex', {
        data: [
          regexScript({ scriptName: 'Good' }),
          regexScript({ scriptName: 'Broken', findRegex: '/(oops/g' }),
        ],
      });
      expect([res.status, res.body.error.code]).toEqual([400, 'import_parse_error']);
      expect(res.body.error.message).toContain('scripts[1].findRegex');
      expect(res.body.error.message).toContain('"Broken"');
      expect(res.body.error.details).toEqual({ field: 'scripts[1].findRegex', script_name: 'Broken' });
      expect(await presetRegexStorage(t, owner.accountId)).toEqual(before);
    });

    it.each([
      [[1], /scripts\[0\] must be an object/],
      [[{ findRegex: 5 }], /findRegex must be a string/],
      [[{ disabled: 'no' }], /disabled must be a boolean/],
      [[{ placement: ['2'] }], /placement must be an array of integers/],
      [[{ trimStrings: 'x' }], /trimStrings must be an array of strings/],
      [[{ minDepth: '3' }], /minDepth must be a number or null/],
    ])('unparseable %j → import_parse_error', async (data, message) => {
      const before = await presetRegexStorage(t, owner.accountId);
      const res = await post('/import/regex', { name: 'bad', data });
      expect([res.status, res.body.error.code]).toEqual([400, 'import_parse_error']);
      expect(res.body.error.message).toMatch(message);
      expect(await presetRegexStorage(t, owner.accountId)).toEqual(before);
    });

    it.each([
      [{}, 'data'],
      [{ data: null }, 'data'],
      [{ data: 'script' }, 'data'],
      [{ data: 3 }, 'data'],
      [{ data: [], name: '' }, 'name'],
      [{ data: [], name: ' ' }, 'name'],
      [{ data: [], name: 'x'.repeat(201) }, 'name'],
      [{ data: [], other: 1 }, 'other'],
    ])('%j → validation_error naming %s', async (body, field) => {
      const before = await presetRegexStorage(t, owner.accountId);
      const res = await post('/import/regex', body);
      expect([res.status, res.body.error.code]).toEqual([400, 'validation_error']);
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
      expect(await presetRegexStorage(t, owner.accountId)).toEqual(before);
    });

    it('takes a 200-character name', async () => {
      const res = await post('/import/regex', { name: 'r'.repeat(200), data: [] });
      expect([res.status, res.body.data.name]).toEqual([201, 'r'.repeat(200)]);
    });

    it('a write that fails after the head row and the log were written rolls back as a whole', async () => {
      const before = await presetRegexStorage(t, owner.accountId);
      const res = await post('/import/regex', {
        name: 'nul',
        data: [regexScript({ replaceString: '\u0000' })],
      });
      expect([res.status, res.body.error.code]).toEqual([400, 'validation_error']);
      expect(await presetRegexStorage(t, owner.accountId)).toEqual(before);
    });
  });

  describe('versions, update and rollback', () => {
    it('PUT makes a new version with a new compat report; versions keep theirs', async () => {
      const created = await importRegexProfile(t, owner.apiKey, { name: 'Evolving' });
      const v2 = [regexScript({ promptOnly: true }), regexScript({ scriptName: 'Second', placement: [6] })];
      const res = await put(`/regex-profiles/${created.id}`, { data: v2 });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        id: created.id,
        name: 'Evolving',
        version_no: 2,
        script_count: 2,
        data: v2,
      });
      expect(res.body.data.compat_report).toMatchObject({
        stored_count: 2,
        prompt_executable_count: 1,
        persist_executable_count: 1,
        contains_reasoning: true,
      });
      const single = await put(`/regex-profiles/${created.id}`, { name: 'One', data: regexScript() });
      expect(single.body.data).toMatchObject({
        name: 'One',
        version_no: 3,
        script_count: 1,
        data: [regexScript()],
      });

      const versions = await get(`/regex-profiles/${created.id}/versions`);
      expect(versions.body.data.map((v: { version_no: number }) => v.version_no)).toEqual([3, 2, 1]);
      expect(versions.body.data[0]).toEqual({
        id: single.body.data.latest_version_id,
        version_no: 3,
        name: 'One',
        change_kind: 'update',
        source_format: 'st_regex_scripts',
        created_by_operation_id: expect.stringMatching(/^oplog_/),
        created_at: expect.any(Number),
      });
      expect(versions.body.meta).toMatchObject({ total: 3, limit: 50, offset: 0, has_more: false });
      const v2Version = await get(
        `/regex-profiles/${created.id}/versions/${res.body.data.latest_version_id}`,
      );
      expect(v2Version.body.data).toMatchObject({
        version_no: 2,
        name: 'Evolving',
        script_count: 2,
        data: v2,
        compat_report: res.body.data.compat_report,
      });
    });

    it('rollback restores an earlier version as a new one, logged as rollback_regex_profile', async () => {
      const v1 = [regexScript({ scriptName: 'First' })];
      const created = await importRegexProfile(t, owner.apiKey, { name: 'Rolling', data: v1 });
      await put(`/regex-profiles/${created.id}`, { name: 'Changed', data: [] });
      const res = await post(`/regex-profiles/${created.id}/rollback`, {
        version_id: created.latest_version_id,
      });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ name: 'Rolling', version_no: 3, script_count: 1, data: v1 });
      expect(res.body.data.compat_report.stored_count).toBe(1);
      expect((await get(`/export/regex/${created.id}`)).body).toEqual(v1);
      const versions = await assetVersionsOf(t, created.id);
      const logs = await logsOf(created.id);
      expect(logs.map((l) => l.action)).toEqual([
        'import_regex_profile',
        'update_regex_profile',
        'rollback_regex_profile',
      ]);
      expect(versions.map((v) => v.change_kind)).toEqual(['import', 'update', 'rollback']);
      expect(versions.map((v) => v.created_by_operation_id)).toEqual(logs.map((l) => l.id));
      expect(logs[2]).toMatchObject({
        target_type: 'regex_profile',
        target_id: created.id,
        before_ref: { id: created.id, name: 'Changed', version_no: 2 },
        after_ref: { id: created.id, name: 'Rolling', version_no: 3, version_id: versions[2].id },
        metadata: { rollback_to: { version_id: created.latest_version_id, version_no: 1 } },
      });
      expect(JSON.stringify(logs)).not.toContain('findRegex');
    });

    it('a version of another profile or an unknown one → 404 asset_version_not_found', async () => {
      const a = await importRegexProfile(t, owner.apiKey);
      const b = await importRegexProfile(t, owner.apiKey);
      for (const versionId of ['rgxv_missing', b.latest_version_id]) {
        const rollback = await post(`/regex-profiles/${a.id}/rollback`, { version_id: versionId });
        expect([rollback.status, rollback.body.error.code]).toEqual([404, 'asset_version_not_found']);
        const one = await get(`/regex-profiles/${a.id}/versions/${versionId}`);
        expect([one.status, one.body.error.code]).toEqual([404, 'asset_version_not_found']);
      }
      expect((await assetVersionsOf(t, a.id)).length).toBe(1);
    });

    it('PUT validates like import and stores nothing on failure', async () => {
      const created = await importRegexProfile(t, owner.apiKey);
      const before = await presetRegexStorage(t, owner.accountId);
      const parse = await put(`/regex-profiles/${created.id}`, { data: [{ findRegex: '[' }] });
      expect([parse.status, parse.body.error.code]).toEqual([400, 'import_parse_error']);
      const shape = await put(`/regex-profiles/${created.id}`, { name: 'no data' });
      expect([shape.status, shape.body.error.code]).toEqual([400, 'validation_error']);
      expect(await presetRegexStorage(t, owner.accountId)).toEqual(before);
    });

    describe('import and PUT share the bounds of a regex file', () => {
      // `/` + pattern + `/g`, exactly `length` characters.
      const findRegex = (i: number, length: number) => {
        const tag = `E${i}_`;
        return `/${tag}${'abcdefghij'.repeat(length / 10).slice(0, length - 3 - tag.length)}/g`;
      };
      const scripts = (n: number, length: number) =>
        Array.from({ length: n }, (_, i) => ({
          scriptName: `s${i}`,
          findRegex: findRegex(i, length),
          placement: [2],
          promptOnly: true,
        }));

      it(`at most ${REGEX_IMPORT_MAX_SCRIPTS} scripts`, async () => {
        const created = await importRegexProfile(t, owner.apiKey);
        const many = scripts(REGEX_IMPORT_MAX_SCRIPTS + 1, 8);
        const before = await presetRegexStorage(t, owner.accountId);
        const past = await put(`/regex-profiles/${created.id}`, { data: many });
        expect([past.status, past.body.error.code]).toEqual([400, 'import_parse_error']);
        expect(past.body.error.message).toMatch(`at most ${REGEX_IMPORT_MAX_SCRIPTS}`);
        expect(await presetRegexStorage(t, owner.accountId)).toEqual(before);
        many.pop();
        const at = await put(`/regex-profiles/${created.id}`, { data: many });
        expect(at.status).toBe(200);
        expect(at.body.data.compat_report).toMatchObject({
          stored_count: REGEX_IMPORT_MAX_SCRIPTS,
          prompt_executable_count: REGEX_IMPORT_MAX_SCRIPTS,
        });
      });

      it(`findRegex patterns total at most ${REGEX_IMPORT_MAX_PATTERN_UNITS} units (import and PUT)`, async () => {
        const count = REGEX_IMPORT_MAX_PATTERN_UNITS / USER_REGEX_LIMITS.maxSourceLength;
        const atLimit = scripts(count, USER_REGEX_LIMITS.maxSourceLength);
        const pastLimit = [...atLimit, { findRegex: 'a', placement: [2] }];
        const before = await presetRegexStorage(t, owner.accountId);
        const refused = await post('/import/regex', { data: pastLimit });
        expect([refused.status, refused.body.error.code]).toEqual([400, 'import_parse_error']);
        expect(refused.body.error.message).toMatch('findRegex patterns are too large');
        expect(await presetRegexStorage(t, owner.accountId)).toEqual(before);

        const imported = await post('/import/regex', { data: atLimit });
        expect(imported.status).toBe(201);
        expect(imported.body.data.compat_report).toMatchObject({
          stored_count: count,
          prompt_executable_count: count,
          unsupported_runtime_count: 0,
        });
        const id = imported.body.data.id as string;
        const putPast = await put(`/regex-profiles/${id}`, { data: pastLimit });
        expect([putPast.status, putPast.body.error.code]).toEqual([400, 'import_parse_error']);
        expect((await get(`/regex-profiles/${id}`)).body.data.version_no).toBe(1);
        const putAt = await put(`/regex-profiles/${id}`, { data: atLimit });
        expect([putAt.status, putAt.body.data.version_no]).toEqual([200, 2]);
      });

      it(`a findRegex over ${USER_REGEX_LIMITS.maxSourceLength} characters imports and is counted unsupported`, async () => {
        const long = scripts(1, USER_REGEX_LIMITS.maxSourceLength + 4);
        const res = await post('/import/regex', { data: [...long, ...scripts(1, 20)] });
        expect(res.status).toBe(201);
        expect(res.body.data.compat_report).toMatchObject({
          stored_count: 2,
          prompt_executable_count: 1,
          unsupported_runtime_count: 1,
        });
      });
    });
  });

  describe('list', () => {
    let lister: Caller;
    beforeAll(async () => {
      lister = await createAccountCaller(t, { name: 'Regex lister' });
      for (const name of ['zeta', 'Eta', 'theta']) await importRegexProfile(t, lister.apiKey, { name });
    });

    it('lists summaries with script_count and compat_report, q and sorts', async () => {
      const res = await get('/regex-profiles', lister.apiKey);
      expect(res.status).toBe(200);
      expect(res.body.data.map((p: { name: string }) => p.name)).toEqual(['theta', 'Eta', 'zeta']);
      expect(res.body.data[0]).toEqual({
        id: expect.stringMatching(/^rgx_/),
        name: 'theta',
        source: 'ext_frontend',
        version_no: 1,
        latest_version_id: expect.stringMatching(/^rgxv_/),
        script_count: 1,
        compat_report: expect.objectContaining({ stored_count: 1 }),
        created_at: expect.any(Number),
        updated_at: expect.any(Number),
      });
      expect(res.body.meta).toEqual({
        total: 3,
        limit: 50,
        offset: 0,
        has_more: false,
        sort_by: 'updated_at',
        sort_order: 'desc',
      });
      const q = await get('/regex-profiles?q=ETA', lister.apiKey);
      expect(q.body.data.map((p: { name: string }) => p.name)).toEqual(['theta', 'Eta', 'zeta']);
      expect(q.body.meta.total).toBe(3);
      const byName = await get('/regex-profiles?sort_by=name&sort_order=desc&limit=2', lister.apiKey);
      expect(byName.body.data.map((p: { name: string }) => p.name)).toEqual(['zeta', 'theta']);
      expect(byName.body.meta).toMatchObject({
        total: 3,
        limit: 2,
        has_more: true,
        sort_by: 'name',
        sort_order: 'desc',
      });
      expect(
        (await get('/regex-profiles?q=th', lister.apiKey)).body.data.map((p: { name: string }) => p.name),
      ).toEqual(['theta']);
    });

    it.each([
      ['limit=200', 200],
      ['limit=201', 400],
      ['limit=0', 400],
      ['offset=-1', 400],
      ['sort_by=script_count', 400],
      ['sort_order=sideways', 400],
    ])('query %s → %i', async (query, status) => {
      const res = await get(`/regex-profiles?${query}`, lister.apiKey);
      expect(res.status).toBe(status);
      if (status === 400) expect(res.body.error.code).toBe('validation_error');
    });
  });

  it('soft-deletes: 200 {id, deleted}, then 404 everywhere, versions kept, delete_regex_profile logged', async () => {
    const created = await importRegexProfile(t, owner.apiKey, { name: 'Gone' });
    const res = await t.http.delete(`/regex-profiles/${created.id}`).set('x-api-key', owner.apiKey);
    expect([res.status, res.body]).toEqual([200, { data: { id: created.id, deleted: true } }]);
    for (const r of [
      await get(`/regex-profiles/${created.id}`),
      await get(`/regex-profiles/${created.id}/versions`),
      await get(`/regex-profiles/${created.id}/versions/${created.latest_version_id}`),
      await put(`/regex-profiles/${created.id}`, { data: [] }),
      await post(`/regex-profiles/${created.id}/rollback`, { version_id: created.latest_version_id }),
      await t.http.delete(`/regex-profiles/${created.id}`).set('x-api-key', owner.apiKey),
    ]) {
      expect([r.status, r.body.error.code]).toEqual([404, 'regex_profile_not_found']);
    }
    const exported = await get(`/export/regex/${created.id}`);
    expect([exported.status, exported.body.error.code]).toEqual([404, 'not_found']);
    expect((await get('/regex-profiles?limit=200')).body.data.map((p: { id: string }) => p.id)).not.toContain(
      created.id,
    );
    expect((await assetVersionsOf(t, created.id)).length).toBe(1);
    expect((await logsOf(created.id)).map((l) => l.action)).toEqual([
      'import_regex_profile',
      'delete_regex_profile',
    ]);
  });

  it('every Client of the account reads and writes its regex profiles', async () => {
    const client = await createClientCaller(t, owner.accountId, 'Regex client');
    const created = await importRegexProfile(t, client.apiKey, { name: 'Client-made' });
    expect((await get(`/regex-profiles/${created.id}`)).status).toBe(200);
    expect((await put(`/regex-profiles/${created.id}`, { data: [] }, client.apiKey)).status).toBe(200);
    expect((await get(`/export/regex/${created.id}`, client.apiKey)).body).toEqual([]);
  });

  it('another account’s profile answers 404 on every route and is not changed', async () => {
    const stranger = await createAccountCaller(t, { name: 'Regex stranger' });
    const created = await importRegexProfile(t, owner.apiKey, { name: 'Secret rules' });
    const key = stranger.apiKey;
    const responses = [
      await get(`/regex-profiles/${created.id}`, key),
      await get(`/regex-profiles/${created.id}/versions`, key),
      await get(`/regex-profiles/${created.id}/versions/${created.latest_version_id}`, key),
      await put(`/regex-profiles/${created.id}`, { data: [] }, key),
      await post(`/regex-profiles/${created.id}/rollback`, { version_id: created.latest_version_id }, key),
      await t.http.delete(`/regex-profiles/${created.id}`).set('x-api-key', key),
    ];
    for (const r of responses)
      expect([r.status, r.body.error.code]).toEqual([404, 'regex_profile_not_found']);
    const exported = await get(`/export/regex/${created.id}`, key);
    expect([exported.status, exported.body.error.code]).toEqual([404, 'not_found']);
    expect(JSON.stringify(responses.map((r) => r.body))).not.toContain('Secret rules');
    expect((await get('/regex-profiles?limit=200', key)).body.data).toEqual([]);
    const own = await importRegexProfile(t, key);
    const cross = await post(
      `/regex-profiles/${own.id}/rollback`,
      { version_id: created.latest_version_id },
      key,
    );
    expect([cross.status, cross.body.error.code]).toEqual([404, 'asset_version_not_found']);
    expect((await get(`/regex-profiles/${created.id}`)).body.data).toMatchObject({
      name: 'Secret rules',
      version_no: 1,
    });
    expect((await assetVersionsOf(t, created.id)).length).toBe(1);
  });
});

import { operationLogsRepository } from '@hearth/persistence';
import { expectFieldEquivalent } from '../../libs/domain/src/formats/format.test-support';
import { createAccountCaller, createClientCaller, type Caller } from '../support/factories/members';
import {
  assetVersionsOf,
  fixtureText,
  importPreset,
  presetFile,
  presetFixtureNames,
  presetRegexStorage,
} from '../support/factories/presets';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Presets (issue 3 item 2, spec 3 "Imports"/"Exports", library conventions): import, export unchanged
 * (values and key order), management routes with immutable versions, rollback, soft delete, operation
 * logs, every error code, and a failed write that stores nothing.
 */
describe('Presets', () => {
  let t: TestApp;
  let owner: Caller;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createAccountCaller(t, { name: 'Preset owner' });
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

  describe.each(presetFixtureNames())('fixture %s', (fixture) => {
    it('imports and exports back the same file: every field, value and key order', async () => {
      const text = fixtureText('presets', fixture);
      const original = JSON.parse(text) as Record<string, unknown>;
      const res = await post('/import/preset', { name: fixture, data: original });
      expect(res.status).toBe(201);
      expect(res.body.data).toEqual({
        id: expect.stringMatching(/^prs_/),
        name: fixture,
        source: 'ext_frontend',
        version_no: 1,
        latest_version_id: expect.stringMatching(/^prsv_/),
        created_at: expect.any(Number),
        updated_at: expect.any(Number),
      });
      const exported = await get(`/export/preset/${res.body.data.id}`);
      expect(exported.status).toBe(200);
      expect(exported.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(exported.headers['content-disposition']).toBe(`attachment; filename="${fixture}.json"`);
      const file = JSON.parse(exported.text) as Record<string, unknown>;
      expectFieldEquivalent(file, original);
      expect(exported.text).toBe(JSON.stringify(original));
      const detail = await get(`/presets/${res.body.data.id}`);
      expectFieldEquivalent(detail.body.data.data, original);
      expect(JSON.stringify(detail.body.data.data)).toBe(JSON.stringify(original));
    });
  });

  it('keeps {{macros}} and unknown fields literal, defaults the name to Unnamed Preset', async () => {
    const data = presetFile();
    const res = await post('/import/preset', { data });
    expect([res.status, res.body.data.name]).toEqual([201, 'Unnamed Preset']);
    const exported = await get(`/export/preset/${res.body.data.id}`);
    expect(exported.body).toEqual(data);
    expect((exported.body.prompts as Array<{ content?: string }>)[0].content).toBe(
      'You are {{char}}. Talk to {{user}}.',
    );
    expect(exported.body.hearth_unknown_field).toEqual({ nested: [1, 'two', null, true] });
  });

  it('sends an escaped quoted filename and an RFC 5987 filename* for non-ASCII names', async () => {
    const quoted = await importPreset(t, owner.apiKey, { name: 'My "best" \\ preset' });
    expect((await get(`/export/preset/${quoted.id}`)).headers['content-disposition']).toBe(
      'attachment; filename="My \\"best\\" \\\\ preset.json"',
    );
    const unicode = await importPreset(t, owner.apiKey, { name: 'Prést (v2)' });
    expect((await get(`/export/preset/${unicode.id}`)).headers['content-disposition']).toBe(
      `attachment; filename="Pr_st (v2).json"; filename*=UTF-8''Pr%C3%A9st%20%28v2%29.json`,
    );
  });

  describe('bad input answers 400 and stores nothing', () => {
    it.each([
      [{}, 'data'],
      [{ data: null }, 'data'],
      [{ data: [] }, 'data'],
      [{ data: 'a string' }, 'data'],
      [{ data: 42 }, 'data'],
      [{ data: {}, name: '' }, 'name'],
      [{ data: {}, name: '   ' }, 'name'],
      [{ data: {}, name: 'x'.repeat(201) }, 'name'],
      [{ data: {}, name: 7 }, 'name'],
      [{ data: {}, extra: true }, 'extra'],
    ])('%j → validation_error naming %s', async (body, field) => {
      const before = await presetRegexStorage(t, owner.accountId);
      const res = await post('/import/preset', body);
      expect([res.status, res.body.error.code]).toEqual([400, 'validation_error']);
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
      expect(await presetRegexStorage(t, owner.accountId)).toEqual(before);
    });

    it.each([
      [{ prompts: 'not a list' }, /prompts must be an array/],
      [{ prompts: [1] }, /prompts\[0\] must be an object/],
      [{ prompts: [{ identifier: 5 }] }, /prompts\[0\]\.identifier must be a string/],
      [{ prompt_order: [{ character_id: 100001 }] }, /prompt_order\[0\]/],
      [{ extensions: [] }, /extensions must be an object/],
    ])('unparseable %j → import_parse_error', async (data, message) => {
      const before = await presetRegexStorage(t, owner.accountId);
      const res = await post('/import/preset', { data });
      expect([res.status, res.body.error.code]).toEqual([400, 'import_parse_error']);
      expect(res.body.error.message).toMatch(message);
      expect(await presetRegexStorage(t, owner.accountId)).toEqual(before);
    });

    it('malformed JSON → validation_error', async () => {
      const res = await t.http
        .post('/import/preset')
        .set('x-api-key', owner.apiKey)
        .set('Content-Type', 'application/json')
        .send('{"data": {');
      expect([res.status, res.body.error.code]).toEqual([400, 'validation_error']);
    });

    it('a write that fails after the head row and the log were written rolls back as a whole', async () => {
      const before = await presetRegexStorage(t, owner.accountId);
      const res = await post('/import/preset', { name: 'nul inside', data: { note: 'a\u0000b' } });
      expect([res.status, res.body.error.code]).toEqual([400, 'validation_error']);
      expect(await presetRegexStorage(t, owner.accountId)).toEqual(before);
    });

    it('takes a 200-character name', async () => {
      const res = await post('/import/preset', { name: 'n'.repeat(200), data: {} });
      expect([res.status, res.body.data.name]).toEqual([201, 'n'.repeat(200)]);
    });
  });

  describe('versions, update and rollback', () => {
    it('PUT makes a new version; versions list newest first; old versions keep their content', async () => {
      const v1Data = presetFile({ temperature: 0.1 });
      const created = await importPreset(t, owner.apiKey, { name: 'Versioned', data: v1Data });
      const v2Data = presetFile({ temperature: 0.2, added_later: 'yes' });
      const updated = await put(`/presets/${created.id}`, { data: v2Data });
      expect(updated.status).toBe(200);
      expect(updated.body.data).toMatchObject({
        id: created.id,
        name: 'Versioned',
        version_no: 2,
        data: v2Data,
      });
      expect(updated.body.data.latest_version_id).not.toBe(created.latest_version_id);
      const renamed = await put(`/presets/${created.id}`, { name: 'Renamed', data: v2Data });
      expect(renamed.body.data).toMatchObject({ name: 'Renamed', version_no: 3 });

      const versions = await get(`/presets/${created.id}/versions`);
      expect(versions.status).toBe(200);
      expect(versions.body.data.map((v: { version_no: number }) => v.version_no)).toEqual([3, 2, 1]);
      expect(versions.body.data.map((v: { change_kind: string }) => v.change_kind)).toEqual([
        'update',
        'update',
        'import',
      ]);
      expect(versions.body.data[2]).toEqual({
        id: created.latest_version_id,
        version_no: 1,
        name: 'Versioned',
        change_kind: 'import',
        source_format: 'st_chat_completion_preset',
        created_by_operation_id: expect.stringMatching(/^oplog_/),
        created_at: expect.any(Number),
      });
      expect(versions.body.meta).toEqual({
        total: 3,
        limit: 50,
        offset: 0,
        has_more: false,
        sort_by: 'version_no',
        sort_order: 'desc',
      });
      const paged = await get(`/presets/${created.id}/versions?limit=1&offset=1`);
      expect(paged.body.data.map((v: { version_no: number }) => v.version_no)).toEqual([2]);
      expect(paged.body.meta).toMatchObject({ total: 3, limit: 1, offset: 1, has_more: true });

      const v1 = await get(`/presets/${created.id}/versions/${created.latest_version_id}`);
      expect(v1.status).toBe(200);
      expect(v1.body.data).toMatchObject({ id: created.latest_version_id, version_no: 1, data: v1Data });
      expect(JSON.stringify(v1.body.data.data)).toBe(JSON.stringify(v1Data));
      expect((await get(`/export/preset/${created.id}`)).body).toEqual(v2Data);
    });

    it('rollback makes a new version equal to the chosen one, logged as rollback_preset', async () => {
      const v1Data = presetFile({ temperature: 1.5 });
      const created = await importPreset(t, owner.apiKey, { name: 'Original', data: v1Data });
      await put(`/presets/${created.id}`, { name: 'Changed', data: presetFile({ temperature: 0 }) });
      const res = await post(`/presets/${created.id}/rollback`, { version_id: created.latest_version_id });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ id: created.id, name: 'Original', version_no: 3, data: v1Data });
      expect((await get(`/export/preset/${created.id}`)).text).toBe(JSON.stringify(v1Data));

      const versions = await assetVersionsOf(t, created.id);
      expect(versions.map((v) => [v.version_no, v.change_kind])).toEqual([
        [1, 'import'],
        [2, 'update'],
        [3, 'rollback'],
      ]);
      const logs = await logsOf(created.id);
      expect(logs.map((l) => l.action)).toEqual(['import_preset', 'update_preset', 'rollback_preset']);
      expect(versions.map((v) => v.created_by_operation_id)).toEqual(logs.map((l) => l.id));
      const rollback = logs[2];
      expect(rollback).toMatchObject({
        target_type: 'preset',
        target_id: created.id,
        before_ref: { id: created.id, name: 'Changed', version_no: 2, version_id: versions[1].id },
        after_ref: { id: created.id, name: 'Original', version_no: 3, version_id: versions[2].id },
        metadata: { rollback_to: { version_id: created.latest_version_id, version_no: 1 } },
      });
      expect(JSON.stringify(logs)).not.toContain('{{char}}');
    });

    it('rollback to an unknown version or another preset’s version → 404 asset_version_not_found', async () => {
      const a = await importPreset(t, owner.apiKey, { name: 'A' });
      const b = await importPreset(t, owner.apiKey, { name: 'B' });
      for (const versionId of ['prsv_missing', b.latest_version_id]) {
        const res = await post(`/presets/${a.id}/rollback`, { version_id: versionId });
        expect([res.status, res.body.error.code]).toEqual([404, 'asset_version_not_found']);
        const one = await get(`/presets/${a.id}/versions/${versionId}`);
        expect([one.status, one.body.error.code]).toEqual([404, 'asset_version_not_found']);
      }
      expect((await assetVersionsOf(t, a.id)).length).toBe(1);
      const bad = await post(`/presets/${a.id}/rollback`, {});
      expect([bad.status, bad.body.error.code]).toEqual([400, 'validation_error']);
    });

    it('parallel PUTs each get their own version number (the head row is locked)', async () => {
      const created = await importPreset(t, owner.apiKey, { name: 'Contended' });
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          put(`/presets/${created.id}`, { data: presetFile({ writer: i }) }),
        ),
      );
      expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
      const numbers = results.map((r) => r.body.data.version_no as number).sort((a, b) => a - b);
      expect(numbers).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
      const head = (await get(`/presets/${created.id}`)).body.data;
      expect(head.version_no).toBe(11);
      const last = results.find((r) => r.body.data.version_no === 11)!;
      expect(head.data).toEqual(last.body.data.data);
      expect((await assetVersionsOf(t, created.id)).map((v) => v.version_no)).toEqual([
        1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
      ]);
    });

    it('PUT validates like import and stores nothing on failure', async () => {
      const created = await importPreset(t, owner.apiKey);
      const before = await presetRegexStorage(t, owner.accountId);
      const parse = await put(`/presets/${created.id}`, { data: { prompts: {} } });
      expect([parse.status, parse.body.error.code]).toEqual([400, 'import_parse_error']);
      const shape = await put(`/presets/${created.id}`, { name: 'only a name' });
      expect([shape.status, shape.body.error.code]).toEqual([400, 'validation_error']);
      const nul = await put(`/presets/${created.id}`, { data: { note: '\u0000' } });
      expect([nul.status, nul.body.error.code]).toEqual([400, 'validation_error']);
      expect(await presetRegexStorage(t, owner.accountId)).toEqual(before);
      expect((await get(`/presets/${created.id}`)).body.data.version_no).toBe(1);
    });
  });

  describe('list', () => {
    let lister: Caller;
    beforeAll(async () => {
      lister = await createAccountCaller(t, { name: 'Lister' });
      for (const name of ['Bravo', 'alpha', 'Charlie 100%', 'delta_x']) {
        await importPreset(t, lister.apiKey, { name });
      }
    });
    const names = (res: { body: { data: Array<{ name: string }> } }) => res.body.data.map((p) => p.name);

    it('lists summaries newest update first by default, with meta', async () => {
      const res = await get('/presets', lister.apiKey);
      expect(res.status).toBe(200);
      expect(names(res)).toEqual(['delta_x', 'Charlie 100%', 'alpha', 'Bravo']);
      expect(res.body.meta).toEqual({
        total: 4,
        limit: 50,
        offset: 0,
        has_more: false,
        sort_by: 'updated_at',
        sort_order: 'desc',
      });
      expect(Object.keys(res.body.data[0]).sort()).toEqual(
        ['created_at', 'id', 'latest_version_id', 'name', 'source', 'updated_at', 'version_no'].sort(),
      );
    });

    it('filters by q (case-insensitive substring, wildcards literal) and sorts', async () => {
      expect(names(await get('/presets?q=ALPH', lister.apiKey))).toEqual(['alpha']);
      expect(names(await get('/presets?q=%25', lister.apiKey))).toEqual(['Charlie 100%']);
      expect(names(await get('/presets?q=_', lister.apiKey))).toEqual(['delta_x']);
      expect((await get('/presets?q=zzz', lister.apiKey)).body.meta.total).toBe(0);
      const byName = await get('/presets?sort_by=name&sort_order=asc', lister.apiKey);
      expect(names(byName).map((n) => n.toLowerCase())).toEqual([
        'alpha',
        'bravo',
        'charlie 100%',
        'delta_x',
      ]);
      expect(byName.body.meta).toMatchObject({ sort_by: 'name', sort_order: 'asc' });
      expect(names(await get('/presets?sort_by=created_at&sort_order=asc', lister.apiKey))).toEqual([
        'Bravo',
        'alpha',
        'Charlie 100%',
        'delta_x',
      ]);
      const page = await get('/presets?sort_by=created_at&sort_order=asc&limit=2&offset=1', lister.apiKey);
      expect(names(page)).toEqual(['alpha', 'Charlie 100%']);
      expect(page.body.meta).toMatchObject({ total: 4, limit: 2, offset: 1, has_more: true });
    });

    it('an update moves a preset to the top of the default order', async () => {
      const first = (await get('/presets?sort_by=created_at&sort_order=asc&limit=1', lister.apiKey)).body
        .data[0];
      await put(`/presets/${first.id}`, { data: presetFile() }, lister.apiKey);
      expect(names(await get('/presets', lister.apiKey))[0]).toBe(first.name);
    });

    it.each([
      ['limit=200', 200],
      ['limit=1', 200],
      ['limit=201', 400],
      ['limit=0', 400],
      ['offset=-1', 400],
      ['limit=abc', 400],
      ['sort_by=id', 400],
      ['sort_order=up', 400],
      [`q=${'q'.repeat(201)}`, 400],
      ['unknown=1', 400],
    ])('query %s → %i', async (query, status) => {
      const res = await get(`/presets?${query}`, lister.apiKey);
      expect(res.status).toBe(status);
      if (status === 400) expect(res.body.error.code).toBe('validation_error');
    });
  });

  describe('delete', () => {
    it('soft-deletes: 200 {id, deleted}, then 404 everywhere, versions kept, delete_preset logged', async () => {
      const created = await importPreset(t, owner.apiKey, { name: 'Doomed' });
      await put(`/presets/${created.id}`, { data: presetFile({ temperature: 0.3 }) });
      const res = await t.http.delete(`/presets/${created.id}`).set('x-api-key', owner.apiKey);
      expect([res.status, res.body]).toEqual([200, { data: { id: created.id, deleted: true } }]);

      const notFound = [
        await get(`/presets/${created.id}`),
        await get(`/presets/${created.id}/versions`),
        await get(`/presets/${created.id}/versions/${created.latest_version_id}`),
        await put(`/presets/${created.id}`, { data: presetFile() }),
        await post(`/presets/${created.id}/rollback`, { version_id: created.latest_version_id }),
        await t.http.delete(`/presets/${created.id}`).set('x-api-key', owner.apiKey),
      ];
      for (const r of notFound) expect([r.status, r.body.error.code]).toEqual([404, 'preset_not_found']);
      const exported = await get(`/export/preset/${created.id}`);
      expect([exported.status, exported.body.error.code]).toEqual([404, 'not_found']);
      const list = await get('/presets?limit=200');
      expect(list.body.data.map((p: { id: string }) => p.id)).not.toContain(created.id);
      expect((await assetVersionsOf(t, created.id)).length).toBe(2);
      const logs = await logsOf(created.id);
      expect(logs.map((l) => l.action)).toEqual(['import_preset', 'update_preset', 'delete_preset']);
      expect(logs[2].before_ref).toMatchObject({ id: created.id, name: 'Doomed', version_no: 2 });
    });

    it('unknown ids answer 404 preset_not_found / not_found', async () => {
      for (const r of [
        await get('/presets/prs_missing'),
        await get('/presets/prs_missing/versions'),
        await put('/presets/prs_missing', { data: {} }),
        await t.http.delete('/presets/prs_missing').set('x-api-key', owner.apiKey),
      ]) {
        expect([r.status, r.body.error.code]).toEqual([404, 'preset_not_found']);
      }
      const exported = await get('/export/preset/prs_missing');
      expect([exported.status, exported.body.error.code]).toEqual([404, 'not_found']);
    });
  });

  it('every Client of the account reads and writes its presets', async () => {
    const client = await createClientCaller(t, owner.accountId, 'Side client');
    const created = await importPreset(t, client.apiKey, { name: 'From a client' });
    expect((await get(`/presets/${created.id}`)).status).toBe(200);
    const updated = await put(`/presets/${created.id}`, { data: presetFile({ n: 1 }) }, client.apiKey);
    expect(updated.status).toBe(200);
    expect((await get(`/export/preset/${created.id}`, client.apiKey)).status).toBe(200);
  });

  it('another account’s preset answers 404 on every route and is not changed', async () => {
    const stranger = await createAccountCaller(t, { name: 'Stranger' });
    const created = await importPreset(t, owner.apiKey, { name: 'Private preset' });
    const key = stranger.apiKey;
    const responses = [
      await get(`/presets/${created.id}`, key),
      await get(`/presets/${created.id}/versions`, key),
      await get(`/presets/${created.id}/versions/${created.latest_version_id}`, key),
      await put(`/presets/${created.id}`, { data: {} }, key),
      await post(`/presets/${created.id}/rollback`, { version_id: created.latest_version_id }, key),
      await t.http.delete(`/presets/${created.id}`).set('x-api-key', key),
    ];
    for (const r of responses) expect([r.status, r.body.error.code]).toEqual([404, 'preset_not_found']);
    const exported = await get(`/export/preset/${created.id}`, key);
    expect([exported.status, exported.body.error.code]).toEqual([404, 'not_found']);
    expect(JSON.stringify(responses.map((r) => r.body))).not.toContain('Private preset');
    expect((await get('/presets?limit=200', key)).body.data).toEqual([]);
    const own = await importPreset(t, key, { name: 'Stranger preset' });
    const cross = await post(`/presets/${own.id}/rollback`, { version_id: created.latest_version_id }, key);
    expect([cross.status, cross.body.error.code]).toEqual([404, 'asset_version_not_found']);
    const foreignVersion = await get(`/presets/${own.id}/versions/${created.latest_version_id}`, key);
    expect([foreignVersion.status, foreignVersion.body.error.code]).toEqual([404, 'asset_version_not_found']);
    const after = await get(`/presets/${created.id}`);
    expect(after.body.data).toMatchObject({ name: 'Private preset', version_no: 1 });
    expect((await assetVersionsOf(t, created.id)).length).toBe(1);
  });

  it('documents the routes in /openapi.json', async () => {
    const doc = await t.http.get('/openapi.json').expect(200);
    const paths = Object.keys(doc.body.paths as Record<string, unknown>);
    expect(paths).toEqual(
      expect.arrayContaining([
        '/import/preset',
        '/export/preset/{id}',
        '/presets',
        '/presets/{id}',
        '/presets/{id}/versions',
        '/presets/{id}/versions/{version_id}',
        '/presets/{id}/rollback',
        '/import/regex',
        '/export/regex/{id}',
        '/regex-profiles',
        '/regex-profiles/{id}/rollback',
      ]),
    );
  });

  it('writes import_preset with essentials only and links version 1 to it', async () => {
    const created = await importPreset(t, owner.apiKey, { name: 'Logged' });
    const [log] = await logsOf(created.id);
    expect(log).toMatchObject({
      action: 'import_preset',
      target_type: 'preset',
      target_id: created.id,
      after_ref: { id: created.id, name: 'Logged', version_no: 1, version_id: created.latest_version_id },
    });
    expect(JSON.stringify(log)).not.toContain('You are');
    const [version] = await assetVersionsOf(t, created.id);
    expect(version.created_by_operation_id).toBe(log.id);
  });
});

import { operationLogsRepository, type SessionRow } from '@hearth/persistence';
import { createOwnedSession } from '../support/factories/accounts';
import { createAssetVersion, createFloor } from '../support/factories/conversation';
import { createAccountCaller, createClientCaller, type Caller } from '../support/factories/members';
import { startTestApp, type TestApp } from '../support/test-app';

interface TagJson {
  id: string;
  account_id: string;
  name: string;
  target_type: 'floor' | 'asset_version';
  target_id: string;
  target_asset_kind: string | null;
  session_id: string | null;
  metadata: unknown;
  created_by_operation_id: string | null;
  created_at: number;
}

/**
 * Spec 3 "VC Tags": tags on floors (session derived from the floor) and on asset versions, unique
 * names per account, `create_tag` / `delete_tag` logs that only record whether metadata exists, every
 * error code of the Tags rows of spec 3 "Errors", list filters and paging, and other accounts' tags,
 * floors, versions and sessions answering 404.
 */
describe('VC tags', () => {
  let t: TestApp;
  let owner: Caller;
  let other: Caller;
  let session: SessionRow;
  let otherSession: SessionRow;
  let counter = 0;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createAccountCaller(t, { name: 'Owner' });
    other = await createAccountCaller(t, { name: 'Other' });
    session = await createOwnedSession(t, owner.accountId);
    otherSession = await createOwnedSession(t, other.accountId);
  });
  afterAll(async () => {
    await t.close();
  });

  const post = (body: unknown, key = owner.apiKey) =>
    t.http
      .post('/vc-tags')
      .set('x-api-key', key)
      .send(body as object);
  const get = (id: string, key = owner.apiKey) => t.http.get(`/vc-tags/${id}`).set('x-api-key', key);
  const del = (id: string, key = owner.apiKey) => t.http.delete(`/vc-tags/${id}`).set('x-api-key', key);
  const list = (query: string, key = owner.apiKey) => t.http.get(`/vc-tags?${query}`).set('x-api-key', key);
  const uniqueName = () => `tag ${++counter}`;
  const logsOf = (accountId: string, targetId: string) =>
    operationLogsRepository.list(
      t.resources.database.db,
      { accountId, filters: { target_id: targetId } },
      { limit: 100, offset: 0, sortOrder: 'asc' },
    );
  const expectError = (
    res: { status: number; body: { error?: { code: string } } },
    status: number,
    code: string,
  ) => expect([res.status, res.body.error?.code]).toEqual([status, code]);
  const floorTag = async (extra: Record<string, unknown> = {}, key = owner.apiKey): Promise<TagJson> => {
    const { floor } = await createFloor(t, session);
    const res = await post({ name: uniqueName(), target_type: 'floor', target_id: floor.id, ...extra }, key);
    if (res.status !== 201)
      throw new Error(`POST /vc-tags answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body.data as TagJson;
  };

  describe('floor targets', () => {
    it("tags a floor with the floor's session, logs create_tag and links the log", async () => {
      const { floor } = await createFloor(t, session);
      const res = await post({
        name: 'Before the storm',
        target_type: 'floor',
        target_id: floor.id,
        metadata: { note: 'secret note', rating: 5 },
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        data: {
          id: expect.stringMatching(/^tag_/),
          account_id: owner.accountId,
          name: 'Before the storm',
          target_type: 'floor',
          target_id: floor.id,
          target_asset_kind: null,
          session_id: session.id,
          metadata: { note: 'secret note', rating: 5 },
          created_by_operation_id: expect.stringMatching(/^oplog_/),
          created_at: expect.any(Number),
        },
      });
      expect((await get(res.body.data.id)).body).toEqual(res.body);

      const [log] = await logsOf(owner.accountId, res.body.data.id);
      expect(log).toMatchObject({
        id: res.body.data.created_by_operation_id,
        action: 'create_tag',
        target_type: 'vc_tag',
        session_id: session.id,
        floor_id: floor.id,
        metadata: { has_metadata: true },
        after_ref: {
          id: res.body.data.id,
          name: 'Before the storm',
          target_type: 'floor',
          target_id: floor.id,
        },
      });
      expect(JSON.stringify(log)).not.toContain('secret note');
    });

    it('accepts the same session_id, and null as "derive it"', async () => {
      const { floor } = await createFloor(t, session);
      const same = await post({
        name: uniqueName(),
        target_type: 'floor',
        target_id: floor.id,
        session_id: session.id,
      });
      expect(same.body.data.session_id).toBe(session.id);
      const nulled = await post({
        name: uniqueName(),
        target_type: 'floor',
        target_id: floor.id,
        session_id: null,
      });
      expect([nulled.status, nulled.body.data.session_id]).toEqual([201, session.id]);
    });

    it("refuses a session_id other than the floor's with 400 invalid_tag_session, storing nothing", async () => {
      const { floor } = await createFloor(t, session);
      const second = await createOwnedSession(t, owner.accountId);
      for (const sessionId of [second.id, 'ses_unknown']) {
        const res = await post({
          name: 'Mismatch',
          target_type: 'floor',
          target_id: floor.id,
          session_id: sessionId,
        });
        expectError(res, 400, 'invalid_tag_session');
      }
      expect((await list(`target_id=${floor.id}`)).body.data).toEqual([]);
    });

    it("answers 404 floor_not_found for a missing floor and for another account's floor", async () => {
      const { floor: foreign } = await createFloor(t, otherSession);
      expectError(
        await post({ name: 'Nope', target_type: 'floor', target_id: 'flr_missing' }),
        404,
        'floor_not_found',
      );
      expectError(
        await post({ name: 'Nope', target_type: 'floor', target_id: foreign.id }),
        404,
        'floor_not_found',
      );
      expectError(
        await post({
          name: 'Nope',
          target_type: 'floor',
          target_id: foreign.id,
          session_id: otherSession.id,
        }),
        404,
        'floor_not_found',
      );
      expect((await list('')).body.data.map((tag: TagJson) => tag.name)).not.toContain('Nope');
    });
  });

  describe('asset version targets', () => {
    it('tags a version, filling target_asset_kind; session_id stays null unless given', async () => {
      const version = await createAssetVersion(t, owner.accountId, { kind: 'worldbook' });
      const res = await post({ name: uniqueName(), target_type: 'asset_version', target_id: version.id });
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({
        target_type: 'asset_version',
        target_id: version.id,
        target_asset_kind: 'worldbook',
        session_id: null,
        metadata: null,
      });
      const [log] = await logsOf(owner.accountId, res.body.data.id);
      expect(log).toMatchObject({ metadata: { has_metadata: false }, floor_id: null, session_id: null });

      for (const kind of ['character', 'preset', 'regex_profile'] as const) {
        const v = await createAssetVersion(t, owner.accountId, { kind });
        const tagged = await post({
          name: uniqueName(),
          target_type: 'asset_version',
          target_id: v.id,
          session_id: session.id,
        });
        expect(tagged.body.data).toMatchObject({ target_asset_kind: kind, session_id: session.id });
      }
    });

    it("answers 404 asset_version_not_found for a missing version and another account's", async () => {
      const foreign = await createAssetVersion(t, other.accountId);
      for (const id of ['chrv_missing', foreign.id])
        expectError(
          await post({ name: 'Nope', target_type: 'asset_version', target_id: id }),
          404,
          'asset_version_not_found',
        );
    });

    it("answers 404 session_not_found for a missing session and another account's", async () => {
      const version = await createAssetVersion(t, owner.accountId);
      for (const sessionId of ['ses_missing', otherSession.id])
        expectError(
          await post({
            name: 'Nope',
            target_type: 'asset_version',
            target_id: version.id,
            session_id: sessionId,
          }),
          404,
          'session_not_found',
        );
    });
  });

  describe('names', () => {
    it('answers 409 tag_exists for a taken name; other accounts are independent; a delete frees it', async () => {
      const tag = await floorTag({ name: 'Milestone' });
      const { floor } = await createFloor(t, session);
      const res = await post({ name: 'Milestone', target_type: 'floor', target_id: floor.id });
      expectError(res, 409, 'tag_exists');
      expect(res.body.error.details).toEqual({ name: 'Milestone' });
      const { floor: theirs } = await createFloor(t, otherSession);
      expect(
        (await post({ name: 'Milestone', target_type: 'floor', target_id: theirs.id }, other.apiKey)).status,
      ).toBe(201);
      expect((await del(tag.id)).status).toBe(200);
      expect((await post({ name: 'Milestone', target_type: 'floor', target_id: floor.id })).status).toBe(201);
    });

    it('gives a name to exactly one of 10 concurrent creates, with one log', async () => {
      const { floor } = await createFloor(t, session);
      const results = await Promise.all(
        Array.from({ length: 10 }, () => post({ name: 'Raced', target_type: 'floor', target_id: floor.id })),
      );
      expect(results.filter((r) => r.status === 201)).toHaveLength(1);
      for (const r of results.filter((x) => x.status !== 201)) expectError(r, 409, 'tag_exists');
      const all = await operationLogsRepository.list(
        t.resources.database.db,
        { accountId: owner.accountId, filters: { action: 'create_tag', floor_id: floor.id } },
        { limit: 100, offset: 0, sortOrder: 'asc' },
      );
      expect(all).toHaveLength(1);
    });
  });

  describe('validation', () => {
    it.each([
      ['name', { target_type: 'floor', target_id: 'flr_x' }],
      ['name', { name: '', target_type: 'floor', target_id: 'flr_x' }],
      ['name', { name: '   ', target_type: 'floor', target_id: 'flr_x' }],
      ['name', { name: 'n'.repeat(201), target_type: 'floor', target_id: 'flr_x' }],
      ['name', { name: 'a\u0000b', target_type: 'floor', target_id: 'flr_x' }],
      ['name', { name: 7, target_type: 'floor', target_id: 'flr_x' }],
      ['target_type', { name: 'x', target_id: 'flr_x' }],
      ['target_type', { name: 'x', target_type: 'session', target_id: 'flr_x' }],
      ['target_id', { name: 'x', target_type: 'floor' }],
      ['target_id', { name: 'x', target_type: 'floor', target_id: '' }],
      ['session_id', { name: 'x', target_type: 'floor', target_id: 'flr_x', session_id: 5 }],
      ['session_id', { name: 'x', target_type: 'floor', target_id: 'flr_x', session_id: '' }],
      ['color', { name: 'x', target_type: 'floor', target_id: 'flr_x', color: 'red' }],
      ['metadata', { name: 'x', target_type: 'floor', target_id: 'flr_x', metadata: { s: 'a\u0000b' } }],
      ['metadata', { name: 'x', target_type: 'floor', target_id: 'flr_x', metadata: 'm'.repeat(64 * 1024) }],
    ])('refuses a bad %s (case %#) with 400 validation_error naming it', async (field, body) => {
      const res = await post(body);
      expectError(res, 400, 'validation_error');
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
    });

    it('takes a 200-character name and metadata of exactly 64 KiB; any JSON value is metadata', async () => {
      const { floor } = await createFloor(t, session);
      const exact = 'm'.repeat(64 * 1024 - 2); // the JSON string's two quotes count
      const res = await post({
        name: 'n'.repeat(200),
        target_type: 'floor',
        target_id: floor.id,
        metadata: exact,
      });
      expect([res.status, res.body.data.metadata]).toEqual([201, exact]);
      for (const metadata of [[1, 'two'], 0, false, 'text'])
        expect(
          (await post({ name: uniqueName(), target_type: 'floor', target_id: floor.id, metadata })).body.data
            .metadata,
        ).toEqual(metadata);
    });

    it('refuses malformed JSON with 400 validation_error', async () => {
      const res = await t.http
        .post('/vc-tags')
        .set('x-api-key', owner.apiKey)
        .set('content-type', 'application/json')
        .send('{"name":');
      expectError(res, 400, 'validation_error');
    });
  });

  describe('GET /vc-tags', () => {
    let lister: Caller;
    let listerSession: SessionRow;
    const tags: TagJson[] = [];

    beforeAll(async () => {
      lister = await createAccountCaller(t, { name: 'Lister' });
      listerSession = await createOwnedSession(t, lister.accountId);
      const { floor } = await createFloor(t, listerSession);
      const version = await createAssetVersion(t, lister.accountId, { kind: 'preset' });
      for (const body of [
        { name: 'f1', target_type: 'floor', target_id: floor.id },
        { name: 'v1', target_type: 'asset_version', target_id: version.id },
        { name: 'f2', target_type: 'floor', target_id: floor.id },
        { name: 'v2', target_type: 'asset_version', target_id: version.id, session_id: listerSession.id },
      ]) {
        tags.push((await post(body, lister.apiKey)).body.data as TagJson);
      }
    });

    const ids = (res: { body: { data: TagJson[] } }) => res.body.data.map((tag) => tag.id);

    it('lists newest first by default with meta, oldest first with sort_order=asc', async () => {
      const res = await list('', lister.apiKey);
      expect(ids(res)).toEqual([tags[3].id, tags[2].id, tags[1].id, tags[0].id]);
      expect(res.body.data[0]).toEqual(tags[3]);
      expect(res.body.meta).toEqual({
        total: 4,
        limit: 50,
        offset: 0,
        has_more: false,
        sort_by: 'created_at',
        sort_order: 'desc',
      });
      expect(ids(await list('sort_order=asc', lister.apiKey))).toEqual(tags.map((tag) => tag.id));
    });

    it('filters by target_type, target_id and session_id', async () => {
      expect(ids(await list('target_type=floor', lister.apiKey))).toEqual([tags[2].id, tags[0].id]);
      expect(ids(await list(`target_id=${tags[1].target_id}`, lister.apiKey))).toEqual([
        tags[3].id,
        tags[1].id,
      ]);
      expect(ids(await list(`session_id=${listerSession.id}`, lister.apiKey))).toEqual([
        tags[3].id,
        tags[2].id,
        tags[0].id,
      ]);
      expect(
        ids(await list(`session_id=${listerSession.id}&target_type=asset_version`, lister.apiKey)),
      ).toEqual([tags[3].id]);
      expect((await list('target_id=nothing', lister.apiKey)).body).toMatchObject({
        data: [],
        meta: { total: 0 },
      });
    });

    it('pages with limit and offset, up to 200', async () => {
      const first = await list('limit=3', lister.apiKey);
      expect(ids(first)).toEqual([tags[3].id, tags[2].id, tags[1].id]);
      expect(first.body.meta).toMatchObject({ total: 4, limit: 3, offset: 0, has_more: true });
      const rest = await list('limit=3&offset=3', lister.apiKey);
      expect(ids(rest)).toEqual([tags[0].id]);
      expect(rest.body.meta).toMatchObject({ has_more: false, offset: 3 });
      expect((await list('limit=200', lister.apiKey)).body.meta.limit).toBe(200);
    });

    it.each([
      'limit=201',
      'limit=0',
      'offset=-1',
      'sort_order=newest',
      'target_type=page',
      'sort_by=name',
      'q=x',
    ])('refuses ?%s with 400 validation_error', async (query) => {
      expectError(await list(query, lister.apiKey), 400, 'validation_error');
    });

    it('pages 50 by default: 51 tags give a full page of 50 with has_more, then the last one', async () => {
      const many = await createAccountCaller(t, { name: 'Many tags' });
      const session = await createOwnedSession(t, many.accountId);
      const { floor } = await createFloor(t, session);
      for (let i = 0; i < 51; i++)
        expect(
          (await post({ name: uniqueName(), target_type: 'floor', target_id: floor.id }, many.apiKey)).status,
        ).toBe(201);
      const all = ids(await list('limit=200', many.apiKey));
      expect(all).toHaveLength(51);
      const first = await list('', many.apiKey);
      expect(ids(first)).toEqual(all.slice(0, 50));
      expect(first.body.meta).toMatchObject({ total: 51, limit: 50, offset: 0, has_more: true });
      const second = await list('offset=50', many.apiKey);
      expect(ids(second)).toEqual([all[50]]);
      expect(second.body.meta).toMatchObject({ total: 51, limit: 50, offset: 50, has_more: false });
    });

    it("never lists another account's tags", async () => {
      const res = await list('limit=200');
      expect(ids(res).filter((id) => tags.some((tag) => tag.id === id))).toEqual([]);
      expect((await list(`session_id=${listerSession.id}`)).body.data).toEqual([]);
    });
  });

  describe('GET and DELETE /vc-tags/:id', () => {
    it('answers 404 tag_not_found for a missing tag', async () => {
      expectError(await get('tag_missing'), 404, 'tag_not_found');
      expectError(await del('tag_missing'), 404, 'tag_not_found');
    });

    it('hard-deletes a tag, logs delete_tag and leaves the target alone', async () => {
      const { floor } = await createFloor(t, session);
      const tag = (
        await post({ name: uniqueName(), target_type: 'floor', target_id: floor.id, metadata: { k: 1 } })
      ).body.data as TagJson;
      const res = await del(tag.id);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: { id: tag.id, deleted: true } });
      expectError(await get(tag.id), 404, 'tag_not_found');
      expectError(await del(tag.id), 404, 'tag_not_found');
      const stillThere = await t.resources.database.db
        .selectFrom('floors')
        .selectAll()
        .where('id', '=', floor.id)
        .executeTakeFirst();
      expect(stillThere).toEqual(floor);
      const logs = await logsOf(owner.accountId, tag.id);
      expect(logs.map((l) => l.action)).toEqual(['create_tag', 'delete_tag']);
      expect(logs[1]).toMatchObject({
        target_type: 'vc_tag',
        session_id: session.id,
        floor_id: floor.id,
        metadata: { has_metadata: true },
        before_ref: { id: tag.id, name: tag.name },
      });
    });

    it('leaves an asset version alone when its tag is deleted', async () => {
      const version = await createAssetVersion(t, owner.accountId, { kind: 'regex_profile' });
      const tag = (await post({ name: uniqueName(), target_type: 'asset_version', target_id: version.id }))
        .body.data as TagJson;
      expect((await del(tag.id)).status).toBe(200);
      const row = await t.resources.database.db
        .selectFrom('asset_versions')
        .selectAll()
        .where('id', '=', version.id)
        .executeTakeFirst();
      expect(row).toEqual(version);
    });
  });

  describe('access', () => {
    it("answers 404 tag_not_found for another account's tag on every route, and leaves it", async () => {
      const { floor } = await createFloor(t, otherSession);
      const theirs = (await post({ name: 'Theirs', target_type: 'floor', target_id: floor.id }, other.apiKey))
        .body.data as TagJson;
      expectError(await get(theirs.id), 404, 'tag_not_found');
      expectError(await del(theirs.id), 404, 'tag_not_found');
      expect((await list(`target_id=${floor.id}`)).body.data).toEqual([]);
      expect((await get(theirs.id, other.apiKey)).body.data).toEqual(theirs);
      expect((await logsOf(other.accountId, theirs.id)).map((l) => l.action)).toEqual(['create_tag']);
    });

    it("lets every Client of the account use the account's tags", async () => {
      const side = await createClientCaller(t, owner.accountId, 'Side');
      const tag = await floorTag({}, side.apiKey);
      expect((await get(tag.id)).body.data).toEqual(tag);
      expect((await del(tag.id, side.apiKey)).status).toBe(200);
    });
  });
});

import { createAccountWithKey } from '../support/factories/accounts';
import { createLibrary } from '../support/factories/library';
import { operationLogsRepository } from '@hearth/persistence';
import {
  addMember,
  createAccountCaller,
  createClientCaller,
  type Caller,
} from '../support/factories/members';
import { createManualProject, findProject } from '../support/factories/projects';
import { createSession, createSessionInProject } from '../support/factories/sessions';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

// Hooks start apps and seed data; jest ignores a per-project testTimeout when several projects run.
jest.setTimeout(60_000);

describe('sessions', () => {
  let t: TestApp;
  let other: Caller;

  const db = () => t.resources.database.db;
  const logsOf = (sessionId: string, accountId = 'default') =>
    operationLogsRepository.list(
      db(),
      { accountId, filters: { session_id: sessionId } },
      { limit: 100, offset: 0, sortOrder: 'asc' },
    );

  beforeAll(async () => {
    t = await startTestApp();
    other = await createAccountCaller(t, { name: 'Other' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('documents the session and Project routes in the OpenAPI document', async () => {
    const doc = await t.http.get('/openapi.json').expect(200);
    for (const path of [
      '/sessions',
      '/sessions/{id}',
      '/sessions/{id}/scope',
      '/projects',
      '/projects/{id}',
      '/projects/{id}/sessions',
    ]) {
      expect(Object.keys(doc.body.paths)).toContain(path);
    }
  });

  describe('POST /sessions', () => {
    it('creates a session with defaults in a new session_default Project of the default Workspace', async () => {
      const res = await t.http.post('/sessions').set('x-api-key', ADMIN_KEY).send({}).expect(201);
      const s = res.body.data;
      expect(Object.keys(res.body)).toEqual(['data']);
      expect(s).toEqual({
        id: expect.stringMatching(/^ses_/),
        title: 'New session',
        status: 'active',
        character_id: null,
        character_version_id: null,
        user_card_id: null,
        preset_id: null,
        worldbook_ids: [],
        regex_profile_id: null,
        archived_at: null,
        created_at: expect.any(Number),
        updated_at: expect.any(Number),
      });
      expect(s).not.toHaveProperty('workspace_id');
      expect(s).not.toHaveProperty('project_id');

      const scope = (await t.http.get(`/sessions/${s.id}/scope`).set('x-api-key', ADMIN_KEY).expect(200))
        .body;
      expect(scope).toEqual({
        session_id: s.id,
        workspace: { id: expect.stringMatching(/^ws_/), name: 'Default workspace', is_default: true },
        project: {
          id: expect.stringMatching(/^prj_/),
          name: 'New session',
          kind: 'session_default',
          status: 'active',
          role: 'owner',
        },
      });
      const project = await findProject(t, scope.project.id);
      expect(project).toMatchObject({
        account_id: 'default',
        workspace_id: scope.workspace.id,
        kind: 'session_default',
      });

      const logs = await logsOf(s.id);
      expect(logs.map((l) => l.action)).toEqual(['create_session']);
      expect(logs[0]).toMatchObject({
        project_id: project!.id,
        workspace_id: project!.workspace_id,
        target_id: s.id,
      });
    });

    it('gives every session created without project_id its own Project', async () => {
      const a = await createSession(t);
      const b = await createSession(t);
      expect(a.projectId).not.toBe(b.projectId);
      expect(a.workspaceId).toBe(b.workspaceId);
    });

    it('stores the title and the bound library assets', async () => {
      const library = await createLibrary(t, ADMIN_KEY, { worldbooks: 2 });
      const body = { title: 'Tavern night', ...library, greeting: false };
      const res = await t.http.post('/sessions').set('x-api-key', ADMIN_KEY).send(body).expect(201);
      const { greeting: _greeting, ...stored } = body;
      expect(res.body.data).toMatchObject(stored);
      const read = await t.http.get(`/sessions/${res.body.data.id}`).set('x-api-key', ADMIN_KEY).expect(200);
      expect(read.body.data).toEqual(res.body.data);
    });

    it('pins a character to its latest version, and a version brings its character', async () => {
      const library = await createLibrary(t, ADMIN_KEY);
      const byCharacter = await t.http
        .post('/sessions')
        .set('x-api-key', ADMIN_KEY)
        .send({ character_id: library.character_id })
        .expect(201);
      expect(byCharacter.body.data.character_version_id).toBe(library.character_version_id);
      const byVersion = await t.http
        .post('/sessions')
        .set('x-api-key', ADMIN_KEY)
        .send({ character_version_id: library.character_version_id })
        .expect(201);
      expect(byVersion.body.data.character_id).toBe(library.character_id);
    });

    it('answers 404 with the asset’s code for unknown or other accounts’ assets, storing nothing', async () => {
      const other = await createAccountWithKey(t);
      const theirs = await createLibrary(t, other.apiKey);
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ character_id: 'chr_missing' }, 'character_not_found'],
        [{ character_id: theirs.character_id }, 'character_not_found'],
        [{ character_version_id: theirs.character_version_id }, 'character_version_not_found'],
        [{ user_card_id: theirs.user_card_id }, 'user_card_not_found'],
        [{ preset_id: theirs.preset_id }, 'preset_not_found'],
        [{ regex_profile_id: theirs.regex_profile_id }, 'regex_profile_not_found'],
        [{ worldbook_ids: theirs.worldbook_ids }, 'worldbook_not_found'],
      ];
      const before = (await t.http.get('/sessions').set('x-api-key', ADMIN_KEY)).body.data.length;
      for (const [body, code] of cases) {
        const res = await t.http.post('/sessions').set('x-api-key', ADMIN_KEY).send(body);
        expect([res.status, res.body.error?.code]).toEqual([404, code]);
      }
      const mine = await createLibrary(t, ADMIN_KEY);
      const wrongVersion = await t.http
        .post('/sessions')
        .set('x-api-key', ADMIN_KEY)
        .send({ character_id: mine.character_id, character_version_id: theirs.character_version_id });
      expect([wrongVersion.status, wrongVersion.body.error.code]).toEqual([
        404,
        'character_version_not_found',
      ]);
      expect((await t.http.get('/sessions').set('x-api-key', ADMIN_KEY)).body.data.length).toBe(before);
    });

    it('accepts a 200-character title and 100 worldbook ids, rejects 201 characters and 101 ids', async () => {
      await t.http
        .post('/sessions')
        .set('x-api-key', ADMIN_KEY)
        .send({ title: 'x'.repeat(200) })
        .expect(201);
      const long = await t.http
        .post('/sessions')
        .set('x-api-key', ADMIN_KEY)
        .send({ title: 'x'.repeat(201) })
        .expect(400);
      expect(long.body.error.code).toBe('validation_error');
      expect(long.body.error.details.fields[0].field).toBe('title');

      const books = (await createLibrary(t, ADMIN_KEY, { worldbooks: 100 })).worldbook_ids;
      const ids = (n: number) => Array.from({ length: n }, (_, i) => books[i % books.length]);
      await t.http.post('/sessions').set('x-api-key', ADMIN_KEY).send({ worldbook_ids: books }).expect(201);
      const many = await t.http
        .post('/sessions')
        .set('x-api-key', ADMIN_KEY)
        .send({ worldbook_ids: ids(101) })
        .expect(400);
      expect(many.body.error.code).toBe('validation_error');
    });

    it.each([
      ['an unknown field', { colour: 'red' }, 'colour'],
      ['a blank title', { title: '   ' }, 'title'],
      ['an empty title', { title: '' }, 'title'],
      ['a numeric title', { title: 5 }, 'title'],
      ['duplicate worldbook ids', { worldbook_ids: ['a', 'a'] }, 'worldbook_ids'],
      ['a non-string worldbook id', { worldbook_ids: [1] }, 'worldbook_ids'],
      ['worldbook_ids not an array', { worldbook_ids: 'wb_1' }, 'worldbook_ids'],
      ['a non-boolean greeting', { greeting: 'yes' }, 'greeting'],
      ['an empty character_id', { character_id: '' }, 'character_id'],
      ['a numeric project_id', { project_id: 7 }, 'project_id'],
    ])(
      'rejects %s with 400 validation_error naming the field and writes nothing',
      async (_name, body, field) => {
        const before = await t.http.get('/sessions').set('x-api-key', ADMIN_KEY).expect(200);
        const res = await t.http.post('/sessions').set('x-api-key', ADMIN_KEY).send(body).expect(400);
        expect(res.body.error.code).toBe('validation_error');
        expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
        const after = await t.http.get('/sessions').set('x-api-key', ADMIN_KEY).expect(200);
        expect(after.body.meta.total).toBe(before.body.meta.total);
      },
    );

    it('places a session in a given Project of the caller', async () => {
      const project = await createManualProject(t, { name: 'Campaign' });
      const created = await createSessionInProject(t, project.id, { body: { title: 'Chapter 1' } });
      expect(created.projectId).toBe(project.id);
      expect(created.workspaceId).toBe(project.workspace_id);
      expect(created.body).not.toHaveProperty('project_id');
      const scope = (
        await t.http.get(`/sessions/${created.id}/scope`).set('x-api-key', ADMIN_KEY).expect(200)
      ).body;
      expect(scope.project).toEqual({
        id: project.id,
        name: 'Campaign',
        kind: 'manual',
        status: 'active',
        role: 'owner',
      });
    });

    it('answers 404 project_not_found for a missing Project or one of another account', async () => {
      const missing = await t.http
        .post('/sessions')
        .set('x-api-key', ADMIN_KEY)
        .send({ project_id: 'prj_nope' })
        .expect(404);
      expect(missing.body.error.code).toBe('project_not_found');
      const foreign = await createManualProject(t, { accountId: other.accountId });
      const res = await t.http
        .post('/sessions')
        .set('x-api-key', ADMIN_KEY)
        .send({ project_id: foreign.id })
        .expect(404);
      expect(res.body.error.code).toBe('project_not_found');
    });

    it('answers 403 project_access_denied to observers and derivers of the Project', async () => {
      const project = await createManualProject(t);
      const observer = await createAccountCaller(t);
      const deriver = await createAccountCaller(t);
      await addMember(t, project, observer, 'observer');
      await addMember(t, project, deriver, 'deriver');
      for (const caller of [observer, deriver]) {
        const res = await t.http
          .post('/sessions')
          .set('x-api-key', caller.apiKey)
          .send({ project_id: project.id })
          .expect(403);
        expect(res.body.error.code).toBe('project_access_denied');
      }
      const list = await t.http
        .get(`/projects/${project.id}/sessions`)
        .set('x-api-key', ADMIN_KEY)
        .expect(200);
      expect(list.body.items).toEqual([]);
    });

    it('answers 409 project_archived for an archived Project', async () => {
      const project = await createManualProject(t, { status: 'archived' });
      const res = await t.http
        .post('/sessions')
        .set('x-api-key', ADMIN_KEY)
        .send({ project_id: project.id })
        .expect(409);
      expect(res.body.error.code).toBe('project_archived');
    });

    it('refuses a non-default Client a session with its own Project (it would not own it): 403', async () => {
      const client = await createClientCaller(t, 'default');
      const res = await t.http
        .post('/sessions')
        .set('x-api-key', client.apiKey)
        .send({ title: 'x' })
        .expect(403);
      expect(res.body.error.code).toBe('project_access_denied');
    });
  });

  describe('GET /sessions', () => {
    let t2: TestApp;
    let owner: Caller;
    beforeAll(async () => {
      t2 = await startTestApp({ database: t.database! });
      owner = await createAccountCaller(t2, { name: 'Lister' });
      for (let i = 0; i < 5; i++) await createSession(t2, { apiKey: owner.apiKey, body: { title: `s${i}` } });
    });
    afterAll(async () => {
      await t2.close();
    });

    it('lists the caller’s sessions newest first with meta', async () => {
      const res = await t2.http.get('/sessions?limit=2').set('x-api-key', owner.apiKey).expect(200);
      expect(res.body.meta).toEqual({ total: 5, limit: 2, offset: 0, has_more: true });
      expect(res.body.data.map((s: { title: string }) => s.title)).toEqual(['s4', 's3']);
      expect(res.body.data[0]).not.toHaveProperty('project_id');
      const last = await t2.http.get('/sessions?limit=2&offset=4').set('x-api-key', owner.apiKey).expect(200);
      expect(last.body.meta).toEqual({ total: 5, limit: 2, offset: 4, has_more: false });
      expect(last.body.data.map((s: { title: string }) => s.title)).toEqual(['s0']);
      const all = await t2.http.get('/sessions').set('x-api-key', owner.apiKey).expect(200);
      expect(all.body.meta).toEqual({ total: 5, limit: 50, offset: 0, has_more: false });
    });

    it('never lists sessions of another account', async () => {
      const res = await t2.http.get('/sessions?limit=200').set('x-api-key', owner.apiKey).expect(200);
      const ids = new Set(res.body.data.map((s: { id: string }) => s.id));
      const mine = await t2.http.get('/sessions?limit=200').set('x-api-key', ADMIN_KEY).expect(200);
      expect(mine.body.data.length).toBeGreaterThan(0);
      for (const s of mine.body.data) expect(ids.has(s.id)).toBe(false);
    });

    it('filters by status', async () => {
      const res = await t2.http.get('/sessions?limit=1').set('x-api-key', owner.apiKey).expect(200);
      await t2.http
        .patch(`/sessions/${res.body.data[0].id}`)
        .set('x-api-key', owner.apiKey)
        .send({ status: 'archived' })
        .expect(200);
      const archived = await t2.http
        .get('/sessions?status=archived')
        .set('x-api-key', owner.apiKey)
        .expect(200);
      expect(archived.body.data.map((s: { id: string }) => s.id)).toEqual([res.body.data[0].id]);
      const active = await t2.http.get('/sessions?status=active').set('x-api-key', owner.apiKey).expect(200);
      expect(active.body.meta.total).toBe(4);
    });

    it('accepts limit 200, rejects 201, 0, non-integers, a negative offset and unknown query fields', async () => {
      await t2.http.get('/sessions?limit=200').set('x-api-key', owner.apiKey).expect(200);
      for (const query of [
        'limit=201',
        'limit=0',
        'limit=1.5',
        'limit=abc',
        'offset=-1',
        'status=deleted',
        'sort=x',
      ]) {
        const res = await t2.http.get(`/sessions?${query}`).set('x-api-key', owner.apiKey).expect(400);
        expect(res.body.error.code).toBe('validation_error');
      }
    });
  });

  describe('GET /sessions/:id', () => {
    it('answers 404 not_found for a missing session and for one of another account', async () => {
      const missing = await t.http.get('/sessions/ses_nope').set('x-api-key', ADMIN_KEY).expect(404);
      expect(missing.body.error.code).toBe('not_found');
      const theirs = await createSession(t, { apiKey: other.apiKey });
      for (const path of [`/sessions/${theirs.id}`, `/sessions/${theirs.id}/scope`]) {
        const res = await t.http.get(path).set('x-api-key', ADMIN_KEY).expect(404);
        expect(res.body.error.code).toBe('not_found');
      }
    });
  });
});

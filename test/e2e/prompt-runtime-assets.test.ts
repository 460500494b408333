import {
  addMember,
  createAccountCaller,
  createClientCaller,
  type Caller,
} from '../support/factories/members';
import { findProject } from '../support/factories/projects';
import { createLibrary, type LibraryIds } from '../support/factories/library';
import { createSession } from '../support/factories/sessions';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

jest.setTimeout(60_000);

describe('GET /sessions/:id/prompt-runtime/assets (the assets the next turn is assembled from)', () => {
  let t: TestApp;
  let library: LibraryIds;
  let other: Caller;
  let observer: Caller;

  const get = (sessionId: string, key = ADMIN_KEY) =>
    t.http.get(`/sessions/${sessionId}/prompt-runtime/assets`).set('x-api-key', key);
  const as = (key = ADMIN_KEY) => ({
    patch: (path: string, body: object) => t.http.patch(path).set('x-api-key', key).send(body),
    del: (path: string) => t.http.delete(path).set('x-api-key', key),
  });

  beforeAll(async () => {
    t = await startTestApp();
    library = await createLibrary(t, ADMIN_KEY, { worldbooks: 2 });
    other = await createAccountCaller(t, { name: 'Other' });
    observer = await createAccountCaller(t, { name: 'Observer' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('a session bound to nothing: every asset null, no worldbooks', async () => {
    const s = await createSession(t);
    const res = await get(s.id).expect(200);
    expect(res.body.data).toEqual({
      session_id: s.id,
      character: null,
      user_card: null,
      preset: null,
      worldbooks: [],
      regex_profile: null,
    });
  });

  it('a session pinned to a character version: each asset with the version the turn uses, worldbooks in order', async () => {
    const s = await createSession(t, {
      body: {
        character_version_id: library.character_version_id,
        user_card_id: library.user_card_id,
        preset_id: library.preset_id,
        worldbook_ids: [...library.worldbook_ids].reverse(),
        regex_profile_id: library.regex_profile_id,
        greeting: false,
      },
    });
    const data = (await get(s.id).expect(200)).body.data;
    expect(data.character).toEqual({
      id: library.character_id,
      available: true,
      name: expect.stringMatching(/^Char /),
      version_id: library.character_version_id,
      version_no: 1,
      updated_at: expect.any(Number),
      sync_policy: 'pin',
      latest_version_id: library.character_version_id,
      latest_version_no: 1,
    });
    expect(data.user_card).toMatchObject({
      id: library.user_card_id,
      available: true,
      name: expect.any(String),
    });
    expect(data.preset).toMatchObject({
      id: library.preset_id,
      available: true,
      name: 'Preset',
      version_no: 1,
    });
    expect(data.preset.version_id).toMatch(/^prsv_/);
    expect(data.regex_profile).toMatchObject({
      id: library.regex_profile_id,
      available: true,
      name: 'Rules',
    });
    expect(data.worldbooks.map((w: { id: string; available: boolean }) => [w.id, w.available])).toEqual(
      [...library.worldbook_ids].reverse().map((id) => [id, true]),
    );
  });

  it('a pinned session keeps its character version when the card is edited, and shows the newer one', async () => {
    const character = await t.http
      .post('/import/character')
      .set('x-api-key', ADMIN_KEY)
      .send({
        create_session: false,
        payload: { spec: 'chara_card_v2', spec_version: '2.0', data: { name: 'Mover', first_mes: 'Hi' } },
      })
      .expect(201);
    const { character_id, character_version_id } = character.body.data;
    const s = await createSession(t, { body: { character_id, greeting: false } });
    expect((await get(s.id).expect(200)).body.data.character).toMatchObject({
      id: character_id,
      version_id: character_version_id,
      version_no: 1,
      sync_policy: 'pin',
      latest_version_id: character_version_id,
    });
    await as()
      .patch(`/characters/${character_id}`, { data: { description: 'edited' } })
      .expect(200);
    const after = (await get(s.id).expect(200)).body.data.character;
    expect(after).toMatchObject({
      id: character_id,
      available: true,
      name: 'Mover',
      version_id: character_version_id,
      version_no: 1,
      sync_policy: 'pin',
      latest_version_no: 2,
    });
    expect(after.latest_version_id).not.toBe(character_version_id);
  });

  it('a session naming only a character follows its latest version (sync_policy latest)', async () => {
    const imported = await t.http
      .post('/import/character')
      .set('x-api-key', ADMIN_KEY)
      .send({
        create_session: false,
        payload: { spec: 'chara_card_v2', spec_version: '2.0', data: { name: 'Follower', first_mes: 'Hi' } },
      })
      .expect(201);
    const { character_id } = imported.body.data;
    const s = await createSession(t, { body: { greeting: false } });
    // The routes always pin; a row naming only the character is what the turn context also accepts.
    await t.resources.database.db
      .updateTable('sessions')
      .set({ character_id, character_version_id: null })
      .where('id', '=', s.id)
      .execute();
    await as()
      .patch(`/characters/${character_id}`, { data: { description: 'v2' } })
      .expect(200);
    const data = (await get(s.id).expect(200)).body.data.character;
    expect(data).toMatchObject({ id: character_id, available: true, version_no: 2, sync_policy: 'latest' });
    expect(data.version_id).toBe(data.latest_version_id);
  });

  it('a deleted preset, worldbook or regex profile is shown as unavailable (the turn runs without it)', async () => {
    const lib = await createLibrary(t, ADMIN_KEY, { worldbooks: 2 });
    const s = await createSession(t, {
      body: {
        preset_id: lib.preset_id,
        worldbook_ids: lib.worldbook_ids,
        regex_profile_id: lib.regex_profile_id,
        greeting: false,
      },
    });
    await as().del(`/presets/${lib.preset_id}`).expect(200);
    await as().del(`/worldbooks/${lib.worldbook_ids[0]}`).expect(204);
    await as().del(`/regex-profiles/${lib.regex_profile_id}`).expect(200);
    const data = (await get(s.id).expect(200)).body.data;
    const gone = (id: string) => ({
      id,
      available: false,
      name: null,
      version_id: null,
      version_no: null,
      updated_at: null,
    });
    expect(data.preset).toEqual(gone(lib.preset_id));
    expect(data.regex_profile).toEqual(gone(lib.regex_profile_id));
    expect(data.worldbooks[0]).toEqual(gone(lib.worldbook_ids[0]));
    expect(data.worldbooks[1]).toMatchObject({ id: lib.worldbook_ids[1], available: true });
  });

  it('any member reads it; another account, a non-member Client and a missing session get 404 session_not_found', async () => {
    const s = await createSession(t, { body: { preset_id: library.preset_id } });
    await addMember(t, (await findProject(t, s.projectId))!, observer, 'observer');
    expect((await get(s.id, observer.apiKey).expect(200)).body.data.preset.id).toBe(library.preset_id);
    const client = await createClientCaller(t, 'default', 'Reader');
    for (const res of [
      await get(s.id, other.apiKey).expect(404),
      await get(s.id, client.apiKey).expect(404),
      await get('ses_missing').expect(404),
    ]) {
      expect(res.body.error.code).toBe('session_not_found');
      expect(JSON.stringify(res.body)).not.toContain(library.preset_id);
    }
  });
});

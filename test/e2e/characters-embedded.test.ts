import { expectFieldEquivalent, readJsonFixture } from '@hearth/domain/formats/format.test-support';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

/** Characters in embedded mode (PGlite): import with a session, update, list, export. */
describe('Characters (embedded mode)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ embedded: true });
  });
  afterAll(async () => {
    await t.close();
  });

  it('imports, updates, lists and exports a card', async () => {
    const card = readJsonFixture('characters', 'Seraphina.ccv3.chara_card_v3.json');
    const imported = await t.http
      .post('/import/character')
      .set('x-api-key', ADMIN_KEY)
      .send({ payload: card });
    expect(imported.status).toBe(201);
    const id = imported.body.data.character.id as string;
    expect(imported.body.data.session.character_binding.character_id).toBe(id);

    const updated = await t.http
      .patch(`/characters/${id}`)
      .set('x-api-key', ADMIN_KEY)
      .send({ data: { scenario: 'embedded' } });
    expect(updated.status).toBe(200);
    expect(updated.body.data.version_no).toBe(2);

    const list = await t.http
      .get('/characters?q=seraph&sort_by=name&sort_order=asc')
      .set('x-api-key', ADMIN_KEY);
    expect(list.body.data.map((c: { id: string }) => c.id)).toEqual([id]);

    const first = await t.http
      .get(`/export/character/${id}?format=v3&version_id=${imported.body.data.character.latest_version_id}`)
      .set('x-api-key', ADMIN_KEY);
    expect(first.status).toBe(200);
    expectFieldEquivalent(first.body, card);
    const lorebook = await t.http.get(`/characters/${id}/lorebook`).set('x-api-key', ADMIN_KEY);
    expect(lorebook.body.data.has_book).toBe(true);
  });
});

import { characterCard, importCharacter } from '../support/factories/characters';
import { appendTurns } from '../support/factories/conversation';
import { findSessionRow } from '../support/factories/sessions';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

// Hooks start apps and seed data; jest ignores a per-project testTimeout when several projects run.
jest.setTimeout(60_000);

/** The conversation routes on the embedded adapters (PGlite): greeting, transcript, branch, reset, swipe. */
describe('conversations in embedded mode', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ embedded: true });
  });
  afterAll(async () => {
    await t.close();
  });

  it('greets, pages, branches, resets and swipes', async () => {
    const api = (method: 'get' | 'post', path: string) => t.http[method](path).set('x-api-key', ADMIN_KEY);
    const character = await importCharacter(t, {
      payload: characterCard({ first_mes: 'Hi', alternate_greetings: ['Hello'] }),
    });
    const created = (
      await api('post', '/sessions').send({ character_version_id: character.versionId }).expect(201)
    ).body.data;
    const session = (await findSessionRow(t, created.id))!;
    const turns = await appendTurns(t, session, 5);
    const all = (await api('get', `/sessions/${session.id}/floors?limit=3&before_floor_no=6`).expect(200))
      .body;
    expect(all.data.map((f: { floor_no: number }) => f.floor_no)).toEqual([3, 4, 5]);
    expect(all.meta).toEqual({ limit: 3, has_more: true });

    const branch = (await api('post', `/floors/${turns[1].id}/branch`).send({}).expect(201)).body.data;
    const more = await appendTurns(t, session, 1, { branchId: branch.branch_id });
    const side = (
      await api('get', `/sessions/${session.id}/floors?branch_id=${branch.branch_id}`).expect(200)
    ).body;
    expect(side.data.map((f: { id: string }) => f.id).slice(-2)).toEqual([turns[1].id, more[0].id]);

    const main = (await api('get', `/sessions/${session.id}/branches`).expect(200)).body.data[0];
    const reset = await api('post', `/sessions/${session.id}/branches/${main.id}/reset`)
      .send({ floor_id: turns[0].id })
      .expect(200);
    expect(reset.body.data).toMatchObject({ head_floor_id: turns[0].id, head_floor_no: 1 });

    const greeting = (await api('get', `/sessions/${session.id}/floors?limit=1`).expect(200)).body.data[0];
    const swiped = await api('post', `/pages/${greeting.pages[1].id}/activate`).expect(200);
    expect(swiped.body.data.pages.map((p: { is_active: boolean }) => p.is_active)).toEqual([false, true]);
  });
});

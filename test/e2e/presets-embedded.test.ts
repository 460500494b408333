import { fixtureText, presetFixtureNames, regexFixtureNames } from '../support/factories/presets';
import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';

// Hooks start apps and seed data; jest ignores a per-project testTimeout when several projects run.
jest.setTimeout(60_000);

/** Presets and regex profiles on the embedded adapters (PGlite): import, update, rollback, export, delete. */
describe('presets and regex profiles in embedded mode', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ embedded: true });
  });
  afterAll(async () => {
    await t.close();
  });

  const api = (method: 'get' | 'post' | 'put' | 'delete', path: string) =>
    t.http[method](path).set('x-api-key', ADMIN_KEY);

  it('round-trips a preset fixture through versions and rollback', async () => {
    const text = fixtureText('presets', presetFixtureNames()[0]);
    const original = JSON.parse(text) as Record<string, unknown>;
    const created = (await api('post', '/import/preset').send({ data: original }).expect(201)).body.data;
    await api('put', `/presets/${created.id}`)
      .send({ data: { ...original, temperature: 0.5 } })
      .expect(200);
    const rolled = (
      await api('post', `/presets/${created.id}/rollback`)
        .send({ version_id: created.latest_version_id })
        .expect(200)
    ).body.data;
    expect(rolled.version_no).toBe(3);
    const exported = await api('get', `/export/preset/${created.id}`).expect(200);
    expect(exported.text).toBe(JSON.stringify(original));
    expect((await api('get', '/presets?q=unnamed').expect(200)).body.meta.total).toBe(1);
    await api('delete', `/presets/${created.id}`).expect(200);
    await api('get', `/presets/${created.id}`).expect(404);
  });

  it('imports and exports a regex fixture with its compat report', async () => {
    const original = JSON.parse(fixtureText('regex', regexFixtureNames()[0])) as Record<string, unknown>;
    const created = (
      await api('post', '/import/regex')
        .send({ data: [original] })
        .expect(201)
    ).body.data;
    expect(created).toMatchObject({ script_count: 1, compat_report: { stored_count: 1 } });
    const exported = await api('get', `/export/regex/${created.id}`).expect(200);
    expect(exported.body).toEqual([original]);
    const versions = (await api('get', `/regex-profiles/${created.id}/versions`).expect(200)).body;
    expect(versions.meta.total).toBe(1);
  });
});

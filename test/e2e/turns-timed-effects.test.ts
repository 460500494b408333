import { importWorldbook } from '../support/factories/worldbooks';
import { createSession } from '../support/factories/sessions';
import { ADMIN_KEY, type TestApp } from '../support/test-app';
import { startFakeModelServer, startTurnsApp, type FakeModelServer } from './turns-support';

type Json = Record<string, any>;

/**
 * Lorebook timed effects across turns (docs/decisions.md "Prompt engine: lorebook", "Turn context and
 * dry-run"): a sticky entry stays in the prompts after the message that activated it, each floor keeps
 * the state its turn saw, and a dry run reads that state as the turn does, so its `messages` are
 * exactly what the model then receives, on the head and on a branch.
 */
describe('turns: lorebook timed effects', () => {
  let fake: FakeModelServer;
  let t: TestApp;

  beforeAll(async () => {
    fake = await startFakeModelServer();
    t = await startTurnsApp(fake);
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await fake.close();
  });
  beforeEach(() => fake.reset());

  const post = (path: string, body: object) => t.http.post(path).set('x-api-key', ADMIN_KEY).send(body);
  const sentText = () => JSON.stringify(fake.requests.at(-1)!.messages);
  const contents = (messages: Array<{ role: string; content: string }>) =>
    messages.map((m) => ({ role: m.role, content: m.content }));

  async function stickySession() {
    const book = await importWorldbook(t, ADMIN_KEY, {
      entries: {
        '0': {
          uid: 0,
          key: ['dragon'],
          keysecondary: [],
          content: 'STICKY-LORE: the dragon sleeps under the hill.',
          constant: false,
          selective: false,
          order: 100,
          position: 0,
          disable: false,
          probability: 100,
          useProbability: true,
          sticky: 6,
        },
      },
    });
    const session = await createSession(t, { body: { worldbook_ids: [book.id] } });
    const floors: string[] = [];
    for (const message of ['a dragon appears', 'plain one']) {
      const res = await post(`/sessions/${session.id}/respond`, { message });
      expect(res.status).toBe(200);
      // Activated by its key, then kept by sticky.
      expect(sentText()).toContain('STICKY-LORE');
      floors.push(res.body.data.floor_id as string);
    }
    return { session, floors };
  }

  it('a dry run on the head sends what respond then sends, sticky entry included', async () => {
    const { session } = await stickySession();
    const dry = await post(`/sessions/${session.id}/respond/dry-run`, { message: 'plain two' });
    expect(dry.status).toBe(200);
    expect(JSON.stringify(dry.body.data.messages)).toContain('STICKY-LORE');
    const res = await post(`/sessions/${session.id}/respond`, { message: 'plain two' });
    expect(res.status).toBe(200);
    expect(fake.requests.at(-1)!.messages).toEqual(contents(dry.body.data.messages));
  });

  it('a branch from an earlier floor previews and sends that floor’s state', async () => {
    const { session, floors } = await stickySession();
    const branch = await post(`/floors/${floors[0]}/branch`, { name: 'side' });
    expect(branch.status).toBe(201);
    const branchId = branch.body.data.id as string;
    const dry = await post(`/sessions/${session.id}/respond/dry-run`, {
      message: 'plain two',
      branch_id: branchId,
    });
    expect(dry.status).toBe(200);
    expect(JSON.stringify(dry.body.data.messages)).toContain('STICKY-LORE');
    const res = await post(`/sessions/${session.id}/respond`, { message: 'plain two', branch_id: branchId });
    expect(res.status).toBe(200);
    expect(fake.requests.at(-1)!.messages).toEqual(contents(dry.body.data.messages));

    // A dry run from an earlier floor of the lineage reads that floor's state, like a retry of the next one.
    const fromFirst = await post(`/sessions/${session.id}/respond/dry-run`, {
      message: 'plain one',
      source_floor_id: floors[0],
    });
    expect(JSON.stringify(fromFirst.body.data.messages)).toContain('STICKY-LORE');
    const retry = await post(`/floors/${floors[1]}/retry`, {});
    expect(retry.status).toBe(200);
    expect(sentText()).toContain('STICKY-LORE');
  });

  it('the dry run writes nothing: the floor state it read is unchanged', async () => {
    const { session, floors } = await stickySession();
    const snapshot = async () =>
      (
        await t.resources.database.db
          .selectFrom('floors')
          .select('state_snapshot')
          .where('id', '=', floors[1])
          .executeTakeFirstOrThrow()
      ).state_snapshot as Json;
    const before = await snapshot();
    expect(before.timed_state.sticky).not.toEqual({});
    for (let i = 0; i < 3; i++)
      expect((await post(`/sessions/${session.id}/respond/dry-run`, { message: 'plain' })).status).toBe(200);
    expect(await snapshot()).toEqual(before);
  });
});

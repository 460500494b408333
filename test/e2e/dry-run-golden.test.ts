import { ADMIN_KEY, startTestApp, type TestApp } from '../support/test-app';
import {
  allRowCounts,
  createGoldenSession,
  goldenUserMessage,
  readGolden,
} from '../support/factories/turn-context';

jest.setTimeout(60_000);

describe('POST /sessions/:id/respond/dry-run: the golden SillyTavern capture through the real routes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const dryRun = (sessionId: string, body: Record<string, unknown>) =>
    t.http.post(`/sessions/${sessionId}/respond/dry-run`).set('x-api-key', ADMIN_KEY).send(body);

  it('imported card, Default preset and bound Eldoria give exactly the messages ST 1.18 sent', async () => {
    const golden = await createGoldenSession(t, ADMIN_KEY);
    const before = await allRowCounts(t);
    const res = await dryRun(golden.sessionId, { message: goldenUserMessage() }).expect(200);
    expect(await allRowCounts(t)).toEqual(before);

    const data = res.body.data;
    expect(data.messages).toEqual(readGolden('request.json').messages);
    expect(data.prompt_snapshot).toMatchObject({
      preset_id: golden.presetId,
      worldbook_ids: [golden.worldbookId],
      prompt_mode: 'compat_strict',
      prompt_digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      token_estimate: data.token_estimate,
    });
    expect(data.prompt_snapshot.worldbook_activated_entry_uids.length).toBeGreaterThan(0);
    expect(Object.keys(data.prompt_snapshot.worldbook_activated_entries)).toEqual([golden.worldbookId]);
    expect(data.assembly.preset_used).toBe(true);
    expect(data.assembly.worldbook_matches).toBeNull();
    expect(data.warnings).toEqual(
      expect.arrayContaining([expect.objectContaining({ code: 'character_book_bound_globally' })]),
    );
    expect(data.available_for_reply).toBeGreaterThan(0);
  });

  it('the card’s own lorebook alone (no bound worldbook) gives the same messages, as character lore', async () => {
    const golden = await createGoldenSession(t, ADMIN_KEY, { bindWorldbook: false });
    const res = await dryRun(golden.sessionId, { message: goldenUserMessage() }).expect(200);
    expect(res.body.data.messages).toEqual(readGolden('request.json').messages);
    const activated = res.body.data.prompt_snapshot.worldbook_activated_entries;
    expect(Object.keys(activated)).toEqual([`${golden.characterVersionId}:character_book`]);
  });

  it('is stable: two dry-runs of the same state give the same digest; another message changes it', async () => {
    const golden = await createGoldenSession(t, ADMIN_KEY);
    const a = await dryRun(golden.sessionId, { message: goldenUserMessage() }).expect(200);
    const b = await dryRun(golden.sessionId, { message: goldenUserMessage() }).expect(200);
    expect(b.body.data.prompt_snapshot.prompt_digest).toBe(a.body.data.prompt_snapshot.prompt_digest);
    const c = await dryRun(golden.sessionId, { message: 'Something else.' }).expect(200);
    expect(c.body.data.prompt_snapshot.prompt_digest).not.toBe(a.body.data.prompt_snapshot.prompt_digest);
    expect(c.body.data.messages.at(-1)).toEqual({ role: 'user', content: 'Something else.' });
  });

  it('include_worldbook_matches expands assembly.worldbook_matches with the spec 2 match fields', async () => {
    const golden = await createGoldenSession(t, ADMIN_KEY);
    const res = await dryRun(golden.sessionId, {
      message: goldenUserMessage(),
      debug_options: { include_worldbook_matches: true },
    }).expect(200);
    const matches = res.body.data.assembly.worldbook_matches;
    expect(matches.length).toBe(res.body.data.prompt_snapshot.worldbook_activated_entry_uids.length);
    expect(matches[0]).toMatchObject({
      uid: expect.any(Number),
      source: { kind: 'global', worldbook_id: golden.worldbookId, worldbook_name: 'Eldoria' },
      activation: expect.objectContaining({
        first_match: expect.objectContaining({ matched_key: expect.any(String) }),
      }),
    });
  });
});

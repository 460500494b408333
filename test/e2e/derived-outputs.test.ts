import type { ProjectRow } from '@hearth/persistence';
import { createSessionRow } from '../support/factories/events';
import {
  createDerivedOutput,
  projectEventRows,
  projectJournal,
  projectLogRows,
} from '../support/factories/derived-outputs';
import { addMember, createAccountCaller, type Caller } from '../support/factories/members';
import { createProject } from '../support/factories/projects';
import { startTestApp, type TestApp } from '../support/test-app';

/** Spec 1 "Derived outputs": create, fields, value and domain limits, sources, events and logs. */
describe('Derived outputs', () => {
  let t: TestApp;
  let owner: Caller;
  let deriver: Caller;
  let project: ProjectRow;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createAccountCaller(t, { name: 'Owner' });
    deriver = await createAccountCaller(t, { name: 'Deriver' });
    project = await createProject(t, { accountId: owner.accountId });
    await addMember(t, project, deriver, 'deriver');
  });
  afterAll(async () => {
    await t.close();
  });

  const base = (p: ProjectRow = project) => `/projects/${p.id}/derived-outputs`;
  const post = (body: unknown, key = owner.apiKey, p = project) =>
    t.http
      .post(base(p))
      .set('x-api-key', key)
      .send(body as object);

  /** A request that must fail with this status and code, leaving no row, no log and no event. */
  async function expectNothingWritten(
    send: () => PromiseLike<{ status: number; body: { error?: { code: string } } }>,
    status: number,
    code: string,
  ) {
    const before = await projectJournal(t, project);
    const res = await send();
    expect({ status: res.status, code: res.body.error?.code }).toEqual({ status, code });
    const after = await projectJournal(t, project);
    expect(after.rows).toEqual(before.rows);
    expect(after.events.length).toBe(before.events.length);
    expect(after.logs.length).toBe(before.logs.length);
  }

  describe('create', () => {
    it('creates a draft with a dout_ id, every field, one log and one event in the same write', async () => {
      const eventsBefore = (await projectEventRows(t, project.id)).length;
      const res = await post({ domain: 'summary', value: { text: 'hello', n: [1, 2] } }).expect(201);
      expect(Object.keys(res.body)).toEqual(['item']);
      const item = res.body.item;
      expect(item).toEqual({
        id: expect.stringMatching(/^dout_[0-9a-z]{26}$/),
        workspace_id: project.workspace_id,
        project_id: project.id,
        account_id: owner.accountId,
        owner_account_id: owner.accountId,
        source_session_id: null,
        source_floor_id: null,
        source_page_id: null,
        domain: 'summary',
        value: { text: 'hello', n: [1, 2] },
        status: 'draft',
        created_at: expect.any(Number),
        updated_at: expect.any(Number),
      });

      const events = (await projectEventRows(t, project.id)).slice(eventsBefore);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        type: 'derived_output.created',
        visibility: 'project',
        actor_account_id: owner.accountId,
      });
      expect(events[0].payload).toEqual({
        derived_output_id: item.id,
        domain: 'summary',
        status: 'draft',
        owner_account_id: owner.accountId,
        source_session_id: null,
        source_floor_id: null,
        source_page_id: null,
        changed_fields: ['domain', 'status', 'value'],
      });
      const logs = (await projectLogRows(t, project)).filter((l) => l.target_id === item.id);
      expect(logs).toHaveLength(1);
      expect(logs[0]).toMatchObject({
        action: 'derived_output.create',
        target_type: 'derived_output',
        status: 'succeeded',
      });
      expect(logs[0].metadata).toEqual({
        value_byte_count: Buffer.byteLength(JSON.stringify({ text: 'hello', n: [1, 2] })),
      });
      expect(JSON.stringify(logs[0])).not.toContain('hello');
      expect(JSON.stringify(events[0])).not.toContain('hello');
      expect(events[0].operation_log_id).toBe(logs[0].id);
    });

    it('defaults value to {} and accepts published, null and scalar values', async () => {
      expect((await createDerivedOutput(t, project.id, owner.apiKey, { value: undefined })).value).toEqual(
        {},
      );
      const res = await post({ domain: 'x' }).expect(201);
      expect(res.body.item.value).toEqual({});
      expect(
        (await post({ domain: 'x', status: 'published', value: null }).expect(201)).body.item,
      ).toMatchObject({ status: 'published', value: null });
      expect((await post({ domain: 'x', value: 'text' }).expect(201)).body.item.value).toBe('text');
      expect((await post({ domain: 'x', value: [1, true, null] }).expect(201)).body.item.value).toEqual([
        1,
        true,
        null,
      ]);
    });

    it('refuses status archived or unknown with derived_output_invalid_status', async () => {
      await expectNothingWritten(
        () => post({ domain: 'x', status: 'archived' }),
        400,
        'derived_output_invalid_status',
      );
      await expectNothingWritten(
        () => post({ domain: 'x', status: 'live' }),
        400,
        'derived_output_invalid_status',
      );
      await expectNothingWritten(() => post({ domain: 'x', status: null }), 400, 'validation_error');
    });

    it('takes a domain of 1 to 128 characters', async () => {
      await post({ domain: 'd'.repeat(128) }).expect(201);
      await post({ domain: 'd' }).expect(201);
      await expectNothingWritten(() => post({ domain: 'd'.repeat(129) }), 400, 'validation_error');
      await expectNothingWritten(() => post({ domain: '' }), 400, 'validation_error');
      await expectNothingWritten(() => post({ value: {} }), 400, 'validation_error');
      await expectNothingWritten(() => post({ domain: 5 }), 400, 'validation_error');
    });

    it('takes a value of exactly 256 KiB and refuses one byte more with 413', async () => {
      const atLimit = 'x'.repeat(262144 - 2); // JSON adds the two quotes
      const ok = await post({ domain: 'big', value: atLimit }).expect(201);
      const log = (await projectLogRows(t, project)).find((l) => l.target_id === ok.body.item.id);
      expect(log?.metadata).toEqual({ value_byte_count: 262144 });
      await expectNothingWritten(
        () => post({ domain: 'big', value: `${atLimit}x` }),
        413,
        'derived_output_payload_too_large',
      );
      // Multi-byte characters count in UTF-8 bytes.
      await expectNothingWritten(
        () => post({ domain: 'big', value: 'é'.repeat(131072) }),
        413,
        'derived_output_payload_too_large',
      );
    });

    it('refuses values that cannot be stored as JSON with derived_output_payload_invalid', async () => {
      await expectNothingWritten(
        () => post({ domain: 'x', value: { text: 'nul \u0000 inside' } }),
        400,
        'derived_output_payload_invalid',
      );
      await expectNothingWritten(
        () => post({ domain: 'x', value: { text: 'half an emoji \ud83d' } }),
        400,
        'derived_output_payload_invalid',
      );
      await expectNothingWritten(
        () => post({ domain: 'x', value: { ['\udc00']: 1 } }),
        400,
        'derived_output_payload_invalid',
      );
      let deep: unknown = 1;
      for (let i = 0; i < 200; i++) deep = { d: deep };
      await expectNothingWritten(
        () => post({ domain: 'x', value: deep }),
        400,
        'derived_output_payload_invalid',
      );
    });

    it('rejects unknown fields with validation_error', async () => {
      await expectNothingWritten(
        () => post({ domain: 'x', owner_account_id: 'acc_x' }),
        400,
        'validation_error',
      );
      await expectNothingWritten(() => post({ domain: 'x', source_session_id: 12 }), 400, 'validation_error');
    });
  });

  describe('sources', () => {
    it('keeps a source session of the Project, in the item, the event and the filter', async () => {
      const session = await createSessionRow(t, project);
      const item = await createDerivedOutput(t, project.id, owner.apiKey, { source_session_id: session.id });
      expect(item.source_session_id).toBe(session.id);
      const event = (await projectEventRows(t, project.id)).at(-1);
      expect(event).toMatchObject({ type: 'derived_output.created', session_id: session.id });
      expect((event?.payload as { changed_fields: string[] }).changed_fields).toContain('source_session_id');
      const list = await t.http
        .get(`${base()}?source_session_id=${session.id}`)
        .set('x-api-key', owner.apiKey)
        .expect(200);
      expect(list.body.items.map((i: { id: string }) => i.id)).toEqual([item.id]);
    });

    it('answers 404 for a missing session or one of another account, 409 for another Project of the account', async () => {
      await expectNothingWritten(
        () => post({ domain: 'x', source_session_id: 'ses_missing' }),
        404,
        'session_not_found',
      );
      const stranger = await createAccountCaller(t);
      const strangerProject = await createProject(t, { accountId: stranger.accountId });
      const strangerSession = await createSessionRow(t, strangerProject);
      await expectNothingWritten(
        () => post({ domain: 'x', source_session_id: strangerSession.id }),
        404,
        'session_not_found',
      );
      const sibling = await createProject(t, { accountId: owner.accountId });
      const siblingSession = await createSessionRow(t, sibling);
      await expectNothingWritten(
        () => post({ domain: 'x', source_session_id: siblingSession.id }),
        409,
        'derived_output_source_scope_mismatch',
      );
    });

    it('answers 404 floor_not_found and page_not_found for floors and pages (none exist before issue 5)', async () => {
      await expectNothingWritten(
        () => post({ domain: 'x', source_floor_id: 'flr_missing' }),
        404,
        'floor_not_found',
      );
      await expectNothingWritten(
        () => post({ domain: 'x', source_page_id: 'pg_missing' }),
        404,
        'page_not_found',
      );
      await post({
        domain: 'x',
        source_floor_id: null,
        source_page_id: null,
        source_session_id: null,
      }).expect(201);
    });
  });
});

import {
  inboxRepository,
  type FloorRow,
  type PageRow,
  type ProjectRow,
  type SessionRow,
} from '@hearth/persistence';
import { projectEventRows, projectLogRows } from '../support/factories/derived-outputs';
import { createSessionRow } from '../support/factories/events';
import { createFloorRow, createFloorWithPage, createPageRow } from '../support/factories/floors';
import { addMember, createAccountCaller, type Caller } from '../support/factories/members';
import { createProject } from '../support/factories/projects';
import { startTestApp, type TestApp } from '../support/test-app';

type Res = { status: number; body: { error?: { code: string } } & Record<string, any> };

/**
 * The Project inbox's source floors and pages (decisions.md "Inbox": the derived output source
 * rules, with the scope mismatch answered as 409 `inbox_entry_source_scope_mismatch`).
 */
describe('Inbox entry sources: floors and pages', () => {
  let t: TestApp;
  let owner: Caller;
  let deriver: Caller;
  let stranger: Caller;
  let project: ProjectRow;
  let session: SessionRow;
  let secondSession: SessionRow;
  let floor: FloorRow;
  let page: PageRow;
  let otherFloor: FloorRow;
  let otherPage: PageRow;
  let secondSessionFloor: FloorRow;
  let secondSessionPage: PageRow;
  let siblingFloor: FloorRow;
  let siblingPage: PageRow;
  let foreignFloor: FloorRow;
  let foreignPage: PageRow;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createAccountCaller(t, { name: 'Owner' });
    deriver = await createAccountCaller(t, { name: 'Deriver' });
    stranger = await createAccountCaller(t, { name: 'Stranger' });
    project = await createProject(t, { accountId: owner.accountId });
    await addMember(t, project, deriver, 'deriver');
    session = await createSessionRow(t, project);
    secondSession = await createSessionRow(t, project);
    ({ floor, page } = await createFloorWithPage(t, session));
    otherFloor = await createFloorRow(t, session, { floorNo: 1 });
    otherPage = await createPageRow(t, otherFloor);
    ({ floor: secondSessionFloor, page: secondSessionPage } = await createFloorWithPage(t, secondSession));
    const sibling = await createProject(t, { accountId: owner.accountId });
    ({ floor: siblingFloor, page: siblingPage } = await createFloorWithPage(
      t,
      await createSessionRow(t, sibling),
    ));
    const foreign = await createProject(t, { accountId: stranger.accountId });
    ({ floor: foreignFloor, page: foreignPage } = await createFloorWithPage(
      t,
      await createSessionRow(t, foreign),
    ));
  });
  afterAll(async () => {
    await t.close();
  });

  const create = (body: Record<string, unknown>, key = owner.apiKey) =>
    t.http
      .post(`/projects/${project.id}/inbox`)
      .set('x-api-key', key)
      .send({ kind: 'suggestion', title: 'A proposal', ...body });

  const journal = async () => ({
    rows: await inboxRepository.listAllOfProject(t.resources.database.db, project.id),
    events: await projectEventRows(t, project.id),
    logs: await projectLogRows(t, project),
  });

  /** A request that must fail with this status and code, leaving no entry, no log and no event. */
  async function refused(send: () => PromiseLike<Res>, status: number, code: string) {
    const before = await journal();
    const res = await send();
    expect({ status: res.status, code: res.body.error?.code }).toEqual({ status, code });
    const after = await journal();
    expect(after.rows).toEqual(before.rows);
    expect(after.events.length).toBe(before.events.length);
    expect(after.logs.length).toBe(before.logs.length);
  }

  describe('accepted', () => {
    it('session, floor and page of the Project: kept in the entry and its event', async () => {
      const res = await create({
        source_session_id: session.id,
        source_floor_id: floor.id,
        source_page_id: page.id,
      }).expect(201);
      expect(res.body.item).toMatchObject({
        status: 'pending',
        source_session_id: session.id,
        source_floor_id: floor.id,
        source_page_id: page.id,
      });
      const [event] = (await projectEventRows(t, project.id)).slice(-1);
      expect(event).toMatchObject({
        type: 'inbox_entry.created',
        session_id: session.id,
        floor_id: floor.id,
        page_id: page.id,
      });
      expect(event.payload).toMatchObject({
        inbox_entry_id: res.body.item.id,
        source_session_id: session.id,
        source_floor_id: floor.id,
        source_page_id: page.id,
      });
    });

    it('a floor alone, a page alone, and a page with its floor (by a deriver)', async () => {
      const floorOnly = await create({ source_floor_id: otherFloor.id }, deriver.apiKey).expect(201);
      expect(floorOnly.body.item).toMatchObject({ source_floor_id: otherFloor.id, source_page_id: null });
      const pageOnly = await create({ source_page_id: secondSessionPage.id }, deriver.apiKey).expect(201);
      expect(pageOnly.body.item).toMatchObject({
        source_floor_id: null,
        source_page_id: secondSessionPage.id,
      });
      const pair = await create(
        {
          source_session_id: secondSession.id,
          source_floor_id: secondSessionFloor.id,
          source_page_id: secondSessionPage.id,
        },
        deriver.apiKey,
      ).expect(201);
      expect(pair.body.item).toMatchObject({
        source_session_id: secondSession.id,
        source_floor_id: secondSessionFloor.id,
        source_page_id: secondSessionPage.id,
      });
    });
  });

  describe('404: missing or of another account', () => {
    it('floor_not_found and page_not_found', async () => {
      await refused(() => create({ source_floor_id: 'flr_missing' }), 404, 'floor_not_found');
      await refused(() => create({ source_floor_id: foreignFloor.id }), 404, 'floor_not_found');
      await refused(() => create({ source_page_id: 'pg_missing' }), 404, 'page_not_found');
      await refused(() => create({ source_page_id: foreignPage.id }), 404, 'page_not_found');
      await refused(
        () => create({ source_floor_id: floor.id, source_page_id: foreignPage.id }),
        404,
        'page_not_found',
      );
    });

    it('an access error comes before any source error', async () => {
      await refused(
        () => create({ source_floor_id: 'flr_missing' }, stranger.apiKey),
        404,
        'project_not_found',
      );
    });
  });

  describe('409 inbox_entry_source_scope_mismatch', () => {
    it('a floor or page of another Project of the same account', async () => {
      await refused(
        () => create({ source_floor_id: siblingFloor.id }),
        409,
        'inbox_entry_source_scope_mismatch',
      );
      await refused(
        () => create({ source_page_id: siblingPage.id }),
        409,
        'inbox_entry_source_scope_mismatch',
      );
    });

    it('a floor or page of another session than source_session_id', async () => {
      await refused(
        () => create({ source_session_id: session.id, source_floor_id: secondSessionFloor.id }),
        409,
        'inbox_entry_source_scope_mismatch',
      );
      await refused(
        () => create({ source_session_id: secondSession.id, source_page_id: page.id }),
        409,
        'inbox_entry_source_scope_mismatch',
      );
    });

    it('a page that is not of the given floor', async () => {
      await refused(
        () => create({ source_floor_id: floor.id, source_page_id: otherPage.id }),
        409,
        'inbox_entry_source_scope_mismatch',
      );
    });
  });
});

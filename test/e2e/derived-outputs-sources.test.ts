import type { FloorRow, PageRow, ProjectRow, SessionRow } from '@hearth/persistence';
import { projectEventRows, projectJournal, projectLogRows } from '../support/factories/derived-outputs';
import { createSessionRow } from '../support/factories/events';
import { createFloorRow, createFloorWithPage, createPageRow } from '../support/factories/floors';
import {
  addMember,
  createAccountCaller,
  createClientCaller,
  type Caller,
} from '../support/factories/members';
import { createProject } from '../support/factories/projects';
import { startTestApp, type TestApp } from '../support/test-app';

type Res = { status: number; body: { error?: { code: string } } & Record<string, any> };

/**
 * Spec 1 "Derived outputs": source floors and pages. They must lie in the Project (through their
 * session), in the given source session, and a page in the given floor; a missing or other-account
 * floor/page is 404, one of the same account elsewhere is 409, and a refused write leaves nothing.
 */
describe('Derived output sources: floors and pages', () => {
  let t: TestApp;
  let owner: Caller;
  let deriver: Caller;
  let stranger: Caller;
  let project: ProjectRow;
  /** Two sessions of the Project; `floor`/`page` and `otherFloor`/`otherPage` lie in `session`. */
  let session: SessionRow;
  let secondSession: SessionRow;
  let floor: FloorRow;
  let page: PageRow;
  let otherFloor: FloorRow;
  let otherPage: PageRow;
  let secondSessionFloor: FloorRow;
  let secondSessionPage: PageRow;
  /** A floor and page of another Project of the same account. */
  let siblingFloor: FloorRow;
  let siblingPage: PageRow;
  /** A floor and page of another account. */
  let foreignFloor: FloorRow;
  let foreignPage: PageRow;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createAccountCaller(t, { name: 'Owner' });
    stranger = await createAccountCaller(t, { name: 'Stranger' });
    deriver = await createClientCaller(t, owner.accountId, 'Deriver client');
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

  const post = (body: Record<string, unknown>, key = owner.apiKey) =>
    t.http
      .post(`/projects/${project.id}/derived-outputs`)
      .set('x-api-key', key)
      .send({ domain: 'summary', value: { text: 'sourced' }, ...body });

  /** A request that must fail with this status and code, leaving no row, no log and no event. */
  async function refused(send: () => PromiseLike<Res>, status: number, code: string) {
    const before = await projectJournal(t, project);
    const res = await send();
    expect({ status: res.status, code: res.body.error?.code }).toEqual({ status, code });
    const after = await projectJournal(t, project);
    expect(after.rows).toEqual(before.rows);
    expect(after.events.length).toBe(before.events.length);
    expect(after.logs.length).toBe(before.logs.length);
  }

  describe('accepted', () => {
    it('session, floor and page of the Project: kept in the item, the log and the event', async () => {
      const res = await post({
        source_session_id: session.id,
        source_floor_id: floor.id,
        source_page_id: page.id,
      }).expect(201);
      const item = res.body.item;
      expect(item).toMatchObject({
        project_id: project.id,
        source_session_id: session.id,
        source_floor_id: floor.id,
        source_page_id: page.id,
      });

      const [event] = (await projectEventRows(t, project.id)).slice(-1);
      expect(event).toMatchObject({
        type: 'derived_output.created',
        session_id: session.id,
        floor_id: floor.id,
        page_id: page.id,
      });
      expect(event.payload).toEqual({
        derived_output_id: item.id,
        domain: 'summary',
        status: 'draft',
        owner_account_id: owner.accountId,
        source_session_id: session.id,
        source_floor_id: floor.id,
        source_page_id: page.id,
        changed_fields: [
          'domain',
          'status',
          'value',
          'source_session_id',
          'source_floor_id',
          'source_page_id',
        ],
      });
      const [log] = (await projectLogRows(t, project)).slice(-1);
      expect(log).toMatchObject({
        action: 'derived_output.create',
        target_id: item.id,
        session_id: session.id,
        floor_id: floor.id,
      });
      expect(event.operation_log_id).toBe(log.id);
    });

    it('a floor alone, a page alone, and a page with its floor, without a session', async () => {
      const floorOnly = await post({ source_floor_id: otherFloor.id }).expect(201);
      expect(floorOnly.body.item).toMatchObject({
        source_session_id: null,
        source_floor_id: otherFloor.id,
        source_page_id: null,
      });
      const pageOnly = await post({ source_page_id: secondSessionPage.id }).expect(201);
      expect(pageOnly.body.item).toMatchObject({
        source_session_id: null,
        source_floor_id: null,
        source_page_id: secondSessionPage.id,
      });
      const pair = await post({ source_floor_id: otherFloor.id, source_page_id: otherPage.id }).expect(201);
      expect(pair.body.item).toMatchObject({ source_floor_id: otherFloor.id, source_page_id: otherPage.id });
    });

    it('a deriver Client writes with sources of the Project too', async () => {
      const res = await post(
        { source_session_id: secondSession.id, source_floor_id: secondSessionFloor.id },
        deriver.apiKey,
      ).expect(201);
      expect(res.body.item).toMatchObject({
        owner_account_id: owner.accountId,
        source_session_id: secondSession.id,
        source_floor_id: secondSessionFloor.id,
      });
    });
  });

  describe('404: missing or of another account', () => {
    it('floor_not_found for a missing floor and for another account’s floor', async () => {
      await refused(() => post({ source_floor_id: 'flr_missing' }), 404, 'floor_not_found');
      await refused(() => post({ source_floor_id: foreignFloor.id }), 404, 'floor_not_found');
      await refused(
        () => post({ source_session_id: session.id, source_floor_id: foreignFloor.id }),
        404,
        'floor_not_found',
      );
    });

    it('page_not_found for a missing page and for another account’s page', async () => {
      await refused(() => post({ source_page_id: 'pg_missing' }), 404, 'page_not_found');
      await refused(() => post({ source_page_id: foreignPage.id }), 404, 'page_not_found');
      await refused(
        () => post({ source_floor_id: floor.id, source_page_id: foreignPage.id }),
        404,
        'page_not_found',
      );
    });

    it('the session is judged first, then the floor, then the page', async () => {
      await refused(
        () =>
          post({ source_session_id: 'ses_missing', source_floor_id: 'flr_missing', source_page_id: 'pg_x' }),
        404,
        'session_not_found',
      );
      await refused(
        () => post({ source_floor_id: foreignFloor.id, source_page_id: siblingPage.id }),
        404,
        'floor_not_found',
      );
      await refused(
        () => post({ source_floor_id: siblingFloor.id, source_page_id: 'pg_missing' }),
        409,
        'derived_output_source_scope_mismatch',
      );
    });

    it('an access error comes before any source error', async () => {
      await refused(
        () => post({ source_floor_id: 'flr_missing' }, stranger.apiKey),
        404,
        'project_not_found',
      );
    });
  });

  describe('409 derived_output_source_scope_mismatch', () => {
    it('a floor or page of another Project of the same account', async () => {
      await refused(
        () => post({ source_floor_id: siblingFloor.id }),
        409,
        'derived_output_source_scope_mismatch',
      );
      await refused(
        () => post({ source_page_id: siblingPage.id }),
        409,
        'derived_output_source_scope_mismatch',
      );
    });

    it('a floor or page of another session of the Project than source_session_id', async () => {
      await refused(
        () => post({ source_session_id: session.id, source_floor_id: secondSessionFloor.id }),
        409,
        'derived_output_source_scope_mismatch',
      );
      await refused(
        () => post({ source_session_id: secondSession.id, source_page_id: page.id }),
        409,
        'derived_output_source_scope_mismatch',
      );
    });

    it('a page that is not of the given floor', async () => {
      await refused(
        () => post({ source_floor_id: floor.id, source_page_id: otherPage.id }),
        409,
        'derived_output_source_scope_mismatch',
      );
      await refused(
        () =>
          post({ source_session_id: session.id, source_floor_id: otherFloor.id, source_page_id: page.id }),
        409,
        'derived_output_source_scope_mismatch',
      );
    });
  });
});

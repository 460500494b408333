import { membersRepository, type ProjectRow } from '@hearth/persistence';
import { projectEventRows, projectLogRows } from '../support/factories/derived-outputs';
import {
  addMember,
  createAccountCaller,
  createClientCaller,
  type Caller,
} from '../support/factories/members';
import { createProject } from '../support/factories/projects';
import { startTestApp, type TestApp } from '../support/test-app';

/** Spec 1 "Members": removal (both routes), its error codes, and the owner-visible member events. */
describe('Project members: removal and events', () => {
  let t: TestApp;
  let owner: Caller;
  let observer: Caller;
  let deriver: Caller;
  let outsider: Caller;
  let ownerExtraClient: Caller;
  let project: ProjectRow;
  let otherProject: ProjectRow;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await createAccountCaller(t, { name: 'Owner' });
    observer = await createAccountCaller(t, { name: 'Observer' });
    deriver = await createAccountCaller(t, { name: 'Deriver' });
    outsider = await createAccountCaller(t, { name: 'Outsider' });
    ownerExtraClient = await createClientCaller(t, owner.accountId, 'Owner extra client');
    project = await createProject(t, { accountId: owner.accountId });
    otherProject = await createProject(t, { accountId: outsider.accountId });
    await addMember(t, project, observer, 'observer');
    await addMember(t, project, deriver, 'deriver');
  });
  afterAll(async () => {
    await t.close();
  });

  const members = (p: ProjectRow, key: string) =>
    t.http.get(`/projects/${p.id}/members`).set('x-api-key', key);
  const add = (p: ProjectRow, key: string, body: Record<string, unknown>) =>
    t.http.post(`/projects/${p.id}/members`).set('x-api-key', key).send(body);
  const remove = (p: ProjectRow, key: string, path: string) =>
    t.http.delete(`/projects/${p.id}/members/${path}`).set('x-api-key', key);

  /** Runs a request that must fail and checks that nothing was written. */
  async function expectRejected(
    request: () => Promise<{ status: number; body: { error?: { code: string } } }>,
    status: number,
    code: string,
  ) {
    const before = {
      events: (await projectEventRows(t, project.id)).length,
      logs: (await projectLogRows(t, project)).length,
    };
    const before2 = (await membersRepository.listActiveMembers(t.resources.database.db, project.id)).length;
    const res = await request();
    expect({ status: res.status, code: res.body.error?.code }).toEqual({ status, code });
    expect((await projectEventRows(t, project.id)).length).toBe(before.events);
    expect((await projectLogRows(t, project)).length).toBe(before.logs);
    expect((await membersRepository.listActiveMembers(t.resources.database.db, project.id)).length).toBe(
      before2,
    );
  }

  describe('member events', () => {
    it('are owner-visible: the owner sees them on the event query, an observer or deriver does not', async () => {
      const target = await createAccountCaller(t);
      await add(project, owner.apiKey, { role: 'observer', account_id: target.accountId }).expect(200);
      await remove(project, owner.apiKey, `account/${target.accountId}`).expect(200);
      const typesFor = async (key: string) =>
        (
          await t.http.get(`/projects/${project.id}/events?limit=500`).set('x-api-key', key).expect(200)
        ).body.items.map((e: { type: string }) => e.type);
      expect(await typesFor(owner.apiKey)).toEqual(
        expect.arrayContaining(['project_member.added', 'project_member.removed']),
      );
      for (const key of [observer.apiKey, deriver.apiKey]) {
        expect((await typesFor(key)).filter((type: string) => type.startsWith('project_member.'))).toEqual(
          [],
        );
      }
    });
  });

  describe('DELETE /projects/:id/members/...', () => {
    it('removes a member, keeps the record, and the member loses access at once', async () => {
      const leaving = await createAccountCaller(t);
      const added = await add(project, owner.apiKey, {
        role: 'deriver',
        account_id: leaving.accountId,
      }).expect(200);
      await members(project, leaving.apiKey).expect(200);
      const eventsBefore = (await projectEventRows(t, project.id)).length;

      const res = await remove(project, owner.apiKey, `account/${leaving.accountId}`).expect(200);
      expect(Object.keys(res.body)).toEqual(['item']);
      expect(res.body.item).toMatchObject({
        id: added.body.item.id,
        status: 'removed',
        role: 'deriver',
        subject_id: leaving.accountId,
      });
      expect((await members(project, leaving.apiKey).expect(404)).body.error.code).toBe('project_not_found');

      const kept = await membersRepository.findMember(
        t.resources.database.db,
        project.id,
        added.body.item.id,
      );
      expect(kept).toMatchObject({ status: 'removed' });
      const listed = (await members(project, owner.apiKey).expect(200)).body.items.map(
        (m: { id: string }) => m.id,
      );
      expect(listed).not.toContain(added.body.item.id);

      const events = (await projectEventRows(t, project.id)).slice(eventsBefore);
      expect(events.map((e) => [e.type, e.visibility])).toEqual([['project_member.removed', 'owner']]);
      const log = (await projectLogRows(t, project))
        .filter((l) => l.target_id === added.body.item.id)
        .map((l) => l.action);
      expect(log).toEqual(['project_member.add', 'project_member.remove']);

      // Removed twice: nothing left to remove. Re-adding makes a new record.
      await expectRejected(
        () => remove(project, owner.apiKey, `account/${leaving.accountId}`),
        404,
        'project_member_not_found',
      );
      const again = await add(project, owner.apiKey, {
        role: 'observer',
        account_id: leaving.accountId,
      }).expect(200);
      expect(again.body.item.id).not.toBe(added.body.item.id);
    });

    it('removes through the legacy account route and by Client subject', async () => {
      const legacy = await createAccountCaller(t);
      await add(project, owner.apiKey, { role: 'observer', account_id: legacy.accountId }).expect(200);
      const res = await remove(project, owner.apiKey, legacy.accountId).expect(200);
      expect(res.body.item).toMatchObject({
        subject_type: 'account',
        subject_id: legacy.accountId,
        status: 'removed',
      });
      await members(project, legacy.apiKey).expect(404);

      const bot = await createClientCaller(t, legacy.accountId, 'Bot');
      await add(project, owner.apiKey, {
        role: 'deriver',
        subject_type: 'client',
        subject_id: bot.clientId,
      }).expect(200);
      const byClient = await remove(project, owner.apiKey, `client/${bot.clientId}`).expect(200);
      expect(byClient.body.item).toMatchObject({
        subject_type: 'client',
        client_id: bot.clientId,
        status: 'removed',
      });
      await members(project, bot.apiKey).expect(404);
    });

    it('refuses removing the owner, an unknown subject type, and a non-member', async () => {
      await expectRejected(
        () => remove(project, owner.apiKey, `account/${owner.accountId}`),
        400,
        'project_member_owner_remove_not_supported',
      );
      await expectRejected(
        () => remove(project, owner.apiKey, owner.accountId),
        400,
        'project_member_owner_remove_not_supported',
      );
      await expectRejected(
        () => remove(project, owner.apiKey, `client/${owner.clientId}`),
        400,
        'project_member_owner_remove_not_supported',
      );
      await expectRejected(
        () => remove(project, owner.apiKey, `group/${observer.accountId}`),
        400,
        'project_member_subject_invalid',
      );
      await expectRejected(
        () => remove(project, owner.apiKey, `account/${outsider.accountId}`),
        404,
        'project_member_not_found',
      );
      await expectRejected(
        () => remove(project, owner.apiKey, 'acc_missing'),
        404,
        'project_member_not_found',
      );
    });

    it('is for the owner only', async () => {
      await expectRejected(
        () => remove(project, observer.apiKey, `account/${deriver.accountId}`),
        403,
        'project_access_denied',
      );
      await expectRejected(
        () => remove(project, deriver.apiKey, deriver.accountId),
        403,
        'project_access_denied',
      );
      await expectRejected(
        () => remove(project, outsider.apiKey, `account/${deriver.accountId}`),
        404,
        'project_not_found',
      );
      await expectRejected(
        () => remove(project, ownerExtraClient.apiKey, `account/${deriver.accountId}`),
        404,
        'project_not_found',
      );
      expect(
        (await remove(otherProject, owner.apiKey, `account/${outsider.accountId}`).expect(404)).body.error
          .code,
      ).toBe('project_not_found');
    });
  });
});

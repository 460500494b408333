import {
  accountsRepository,
  clientsRepository,
  membersRepository,
  type ProjectRow,
} from '@hearth/persistence';
import { projectEventRows, projectLogRows } from '../support/factories/derived-outputs';
import {
  addMember,
  createAccountCaller,
  createClientCaller,
  type Caller,
} from '../support/factories/members';
import { createProject } from '../support/factories/projects';
import { startTestApp, type TestApp } from '../support/test-app';

/** Spec 1 "Members": list, add, remove, the legacy remove route and every members error code. */
describe('Project members', () => {
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

  describe('GET /projects/:id/members', () => {
    it('lists the owner first (from ownership), then the active members, without a data wrapper', async () => {
      const res = await members(project, owner.apiKey).expect(200);
      expect(Object.keys(res.body)).toEqual(['items']);
      const [first, ...rest] = res.body.items;
      expect(first).toMatchObject({
        project_id: project.id,
        workspace_id: project.workspace_id,
        account_id: owner.accountId,
        role: 'owner',
        status: 'active',
        subject_type: 'account',
        subject_id: owner.accountId,
        client_id: null,
      });
      expect(rest.map((m: { subject_id: string; role: string }) => [m.subject_id, m.role])).toEqual(
        expect.arrayContaining([
          [observer.accountId, 'observer'],
          [deriver.accountId, 'deriver'],
        ]),
      );
    });

    it('is open to every member and hidden from others', async () => {
      await members(project, observer.apiKey).expect(200);
      await members(project, deriver.apiKey).expect(200);
      expect((await members(project, outsider.apiKey).expect(404)).body.error.code).toBe('project_not_found');
      expect((await members(project, ownerExtraClient.apiKey).expect(404)).body.error.code).toBe(
        'project_not_found',
      );
      expect((await members(otherProject, owner.apiKey).expect(404)).body.error.code).toBe(
        'project_not_found',
      );
      expect(
        (await t.http.get('/projects/prj_missing/members').set('x-api-key', owner.apiKey).expect(404)).body
          .error.code,
      ).toBe('project_not_found');
    });
  });

  describe('POST /projects/:id/members', () => {
    it('adds an account by account_id, with its log and one owner-visible event in the same write', async () => {
      const newcomer = await createAccountCaller(t, { name: 'Newcomer' });
      await members(project, newcomer.apiKey).expect(404);
      const eventsBefore = await projectEventRows(t, project.id);
      const res = await add(project, owner.apiKey, {
        role: 'observer',
        account_id: newcomer.accountId,
      }).expect(200);
      expect(Object.keys(res.body)).toEqual(['item']);
      expect(res.body.item).toMatchObject({
        id: expect.stringMatching(/^pmem_/),
        project_id: project.id,
        workspace_id: project.workspace_id,
        account_id: newcomer.accountId,
        role: 'observer',
        status: 'active',
        subject_type: 'account',
        subject_id: newcomer.accountId,
        client_id: null,
        created_by_account_id: owner.accountId,
        created_by_client_id: owner.clientId,
      });
      expect(typeof res.body.item.created_at).toBe('number');
      await members(project, newcomer.apiKey).expect(200);

      const events = (await projectEventRows(t, project.id)).slice(eventsBefore.length);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        type: 'project_member.added',
        visibility: 'owner',
        actor_account_id: owner.accountId,
      });
      expect(events[0].payload).toMatchObject({
        member_id: res.body.item.id,
        role: 'observer',
        subject_type: 'account',
      });
      const log = (await projectLogRows(t, project)).find((l) => l.target_id === res.body.item.id);
      expect(log).toMatchObject({
        action: 'project_member.add',
        target_type: 'project_member',
        status: 'succeeded',
      });
      expect(events[0].operation_log_id).toBe(log?.id);
    });

    it('adds a Client by subject_type and subject_id; the Client then reads but cannot manage', async () => {
      const client = await createClientCaller(t, outsider.accountId, 'Bot');
      await members(project, client.apiKey).expect(404);
      const res = await add(project, owner.apiKey, {
        role: 'deriver',
        subject_type: 'client',
        subject_id: client.clientId,
      }).expect(200);
      expect(res.body.item).toMatchObject({
        subject_type: 'client',
        subject_id: client.clientId,
        client_id: client.clientId,
        account_id: outsider.accountId,
        role: 'deriver',
      });
      await members(project, client.apiKey).expect(200);
      // The Client's own account (its default Client) gains nothing.
      await members(project, outsider.apiKey).expect(404);
      const denied = await add(project, client.apiKey, {
        role: 'observer',
        account_id: outsider.accountId,
      }).expect(403);
      expect(denied.body.error.code).toBe('project_access_denied');
    });

    it("lets the owner add its own account's other Clients, which have no owner rights until then", async () => {
      const res = await add(project, owner.apiKey, {
        role: 'observer',
        subject_type: 'client',
        subject_id: ownerExtraClient.clientId,
      });
      expect(res.status).toBe(200);
      await members(project, ownerExtraClient.apiKey).expect(200);
      const denied = await add(project, ownerExtraClient.apiKey, {
        role: 'observer',
        account_id: outsider.accountId,
      }).expect(403);
      expect(denied.body.error.code).toBe('project_access_denied');
      await remove(project, owner.apiKey, `client/${ownerExtraClient.clientId}`).expect(200);
      await members(project, ownerExtraClient.apiKey).expect(404);
    });

    it('refuses owner, unknown and missing roles', async () => {
      const target = await createAccountCaller(t);
      await expectRejected(
        () => add(project, owner.apiKey, { role: 'owner', account_id: target.accountId }),
        400,
        'project_member_owner_role_conflict',
      );
      await expectRejected(
        () => add(project, owner.apiKey, { role: 'admin', account_id: target.accountId }),
        400,
        'project_member_role_not_supported',
      );
      await expectRejected(
        () => add(project, owner.apiKey, { account_id: target.accountId }),
        400,
        'validation_error',
      );
      await expectRejected(
        () => add(project, owner.apiKey, { role: 7, account_id: target.accountId }),
        400,
        'validation_error',
      );
    });

    it('refuses the owner itself and its default Client', async () => {
      await expectRejected(
        () => add(project, owner.apiKey, { role: 'observer', account_id: owner.accountId }),
        400,
        'project_member_owner_role_conflict',
      );
      await expectRejected(
        () =>
          add(project, owner.apiKey, {
            role: 'deriver',
            subject_type: 'account',
            subject_id: owner.accountId,
          }),
        400,
        'project_member_owner_role_conflict',
      );
      await expectRejected(
        () =>
          add(project, owner.apiKey, {
            role: 'observer',
            subject_type: 'client',
            subject_id: owner.clientId,
          }),
        400,
        'project_member_default_client_owner_conflict',
      );
    });

    it('refuses a bad subject shape', async () => {
      await expectRejected(
        () => add(project, owner.apiKey, { role: 'observer', subject_type: 'group', subject_id: 'x' }),
        400,
        'project_member_subject_invalid',
      );
      await expectRejected(() => add(project, owner.apiKey, { role: 'observer' }), 400, 'validation_error');
      await expectRejected(
        () => add(project, owner.apiKey, { role: 'observer', subject_type: 'client' }),
        400,
        'validation_error',
      );
      await expectRejected(
        () =>
          add(project, owner.apiKey, {
            role: 'observer',
            account_id: outsider.accountId,
            subject_type: 'account',
            subject_id: outsider.accountId,
          }),
        400,
        'validation_error',
      );
      await expectRejected(
        () => add(project, owner.apiKey, { role: 'observer', account_id: outsider.accountId, extra: 1 }),
        400,
        'validation_error',
      );
    });

    it('refuses missing or disabled subjects', async () => {
      await expectRejected(
        () =>
          add(project, owner.apiKey, { role: 'observer', subject_type: 'client', subject_id: 'cli_missing' }),
        404,
        'project_member_client_not_found',
      );
      const disabled = await createClientCaller(t, outsider.accountId, 'Disabled');
      await clientsRepository.updateClient(t.resources.database.db, outsider.accountId, disabled.clientId, {
        status: 'disabled',
        updated_at: Date.now(),
      });
      await expectRejected(
        () =>
          add(project, owner.apiKey, {
            role: 'observer',
            subject_type: 'client',
            subject_id: disabled.clientId,
          }),
        409,
        'project_member_client_not_found',
      );
      await expectRejected(
        () => add(project, owner.apiKey, { role: 'observer', account_id: 'acc_missing' }),
        404,
        'project_member_account_not_found',
      );
      const disabledAccount = await createAccountCaller(t);
      await accountsRepository.updateAccount(t.resources.database.db, disabledAccount.accountId, {
        status: 'disabled',
        updated_at: Date.now(),
      });
      await expectRejected(
        () => add(project, owner.apiKey, { role: 'observer', account_id: disabledAccount.accountId }),
        409,
        'project_member_account_not_found',
      );
    });

    it('refuses a subject that already holds a role, whatever the role asked', async () => {
      await expectRejected(
        () => add(project, owner.apiKey, { role: 'observer', account_id: observer.accountId }),
        409,
        'project_member_role_conflict',
      );
      await expectRejected(
        () => add(project, owner.apiKey, { role: 'deriver', account_id: observer.accountId }),
        409,
        'project_member_role_conflict',
      );
    });

    it('lets exactly one of two concurrent adds of one subject win', async () => {
      const target = await createAccountCaller(t);
      const results = await Promise.all([
        add(project, owner.apiKey, { role: 'observer', account_id: target.accountId }),
        add(project, owner.apiKey, { role: 'deriver', account_id: target.accountId }),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
      expect(results.find((r) => r.status === 409)?.body.error.code).toBe('project_member_role_conflict');
    });

    it('is for the owner only: observer and deriver 403, non-members and other accounts 404', async () => {
      const target = await createAccountCaller(t);
      await expectRejected(
        () => add(project, observer.apiKey, { role: 'observer', account_id: target.accountId }),
        403,
        'project_access_denied',
      );
      await expectRejected(
        () => add(project, deriver.apiKey, { role: 'observer', account_id: target.accountId }),
        403,
        'project_access_denied',
      );
      await expectRejected(
        () => add(project, outsider.apiKey, { role: 'observer', account_id: target.accountId }),
        404,
        'project_not_found',
      );
      await expectRejected(
        () => add(project, ownerExtraClient.apiKey, { role: 'observer', account_id: target.accountId }),
        404,
        'project_not_found',
      );
      const res = await add(otherProject, owner.apiKey, {
        role: 'observer',
        account_id: target.accountId,
      }).expect(404);
      expect(res.body.error.code).toBe('project_not_found');
    });
  });
});

import { ID_PREFIX, newId } from '@hearth/domain';
import {
  accountsRepository,
  projectsRepository,
  type ProjectMemberRow,
  type ProjectRow,
} from '@hearth/persistence';
import type { TestApp } from '../test-app';
import { createAccountWithKey, createClientWithKey } from './accounts';

/** Someone who can call the API: an account's Client and a key for it. */
export interface Caller {
  accountId: string;
  clientId: string;
  /** True for the account's default Client (which acts as the account). */
  isDefault: boolean;
  apiKey: string;
}

/**
 * A new account (with its default Client and default Workspace, like `POST /accounts`) and a key for
 * its default Client. Works in single mode too, since it does not go through the API.
 */
export async function createAccountCaller(
  t: TestApp,
  options: { name?: string; role?: 'admin' | 'user' } = {},
): Promise<Caller> {
  const { accountId, clientId, apiKey } = await createAccountWithKey(t, {
    name: options.name ?? 'Test account',
    role: options.role,
  });
  return { accountId, clientId, isDefault: true, apiKey };
}

/** A non-default Client of an account, with a key. It has no owner rights (spec 1 point 3). */
export async function createClientCaller(
  t: TestApp,
  accountId: string,
  name = 'Test client',
): Promise<Caller> {
  const { clientId, apiKey } = await createClientWithKey(t, accountId, { name });
  return { accountId, clientId, isDefault: false, apiKey };
}

/** The default account's default Client, with the test app's admin key. */
export async function defaultCaller(t: TestApp, apiKey: string): Promise<Caller> {
  const account = await accountsRepository.findDefaultAccount(t.resources.database.db);
  const client = account && (await accountsRepository.findDefaultClient(t.resources.database.db, account.id));
  if (!account || !client) throw new Error('no default account');
  return { accountId: account.id, clientId: client.id, isDefault: true, apiKey };
}

export type MemberRole = 'observer' | 'deriver';

/**
 * Makes a subject a member of a Project, through `projectsRepository.insertMember` (the members
 * routes are issue 7). `as: 'account'` (default for a default Client's caller) grants the role to the
 * account, which its default Client then holds; `as: 'client'` grants it to that one Client.
 */
export async function addMember(
  t: TestApp,
  project: Pick<ProjectRow, 'id' | 'workspace_id' | 'account_id'>,
  subject: Pick<Caller, 'accountId' | 'clientId' | 'isDefault'>,
  role: MemberRole,
  options: { as?: 'account' | 'client' } = {},
): Promise<ProjectMemberRow> {
  const as = options.as ?? (subject.isDefault ? 'account' : 'client');
  const now = Date.now();
  return projectsRepository.insertMember(t.resources.database.db, {
    id: newId(ID_PREFIX.member),
    workspace_id: project.workspace_id,
    project_id: project.id,
    account_id: subject.accountId,
    role,
    status: 'active',
    subject_type: as,
    subject_id: as === 'account' ? subject.accountId : subject.clientId,
    client_id: as === 'client' ? subject.clientId : null,
    created_by_account_id: project.account_id,
    created_by_client_id: null,
    created_at: now,
    updated_at: now,
  });
}

import { OperationLogWriter, provisionAccount, type OperationLogInput } from '@hearth/app';
import { apiKeyPrefix, generateApiKey, hashApiKey, ID_PREFIX, newId } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import {
  accountsRepository,
  credentialsRepository,
  inTransaction,
  projectsRepository,
  sessionsRepository,
  type AccountRow,
  type ApiKeysTable,
  type OperationLogRow,
  type ProjectRow,
  type SessionRow,
} from '@hearth/persistence';
import type { Selectable } from 'kysely';
import type { TestApp } from '../test-app';

/** An account with a key for its default Client. */
export interface AccountWithKey {
  account: AccountRow;
  accountId: string;
  clientId: string;
  apiKey: string;
}

/** A new key for a Client, written through the credentials repository. */
export async function addKey(t: TestApp, clientId: string): Promise<string> {
  const apiKey = generateApiKey();
  await credentialsRepository.insertKey(t.resources.database.db, {
    id: newId(ID_PREFIX.apiKey),
    client_id: clientId,
    key_hash: hashApiKey(apiKey),
    key_prefix: apiKeyPrefix(apiKey),
    created_at: Date.now(),
  });
  return apiKey;
}

/**
 * An account made the way `POST /accounts` makes one (provisionAccount: default Client and
 * Workspace), plus a key for its default Client. Works in single mode, where the route refuses.
 */
export async function createAccountWithKey(
  t: TestApp,
  options: { id?: string; name?: string; role?: 'admin' | 'user' } = {},
): Promise<AccountWithKey> {
  const db = t.resources.database.db;
  const account = await inTransaction(db, ({ tx }) =>
    provisionAccount(tx, {
      id: options.id,
      name: options.name ?? 'Factory account',
      role: options.role ?? 'user',
    }),
  );
  const client = await accountsRepository.findDefaultClient(db, account.id);
  if (!client) throw new Error('provisioned account has no default Client');
  return { account, accountId: account.id, clientId: client.id, apiKey: await addKey(t, client.id) };
}

/** A non-default Client of an account, with a key. */
export async function createClientWithKey(
  t: TestApp,
  accountId: string,
  options: { name?: string; status?: 'active' | 'disabled' } = {},
): Promise<{ clientId: string; apiKey: string }> {
  const now = Date.now();
  const client = await accountsRepository.insertClient(t.resources.database.db, {
    id: newId(ID_PREFIX.client),
    account_id: accountId,
    name: options.name ?? 'Factory client',
    status: options.status ?? 'active',
    is_default: false,
    created_at: now,
    updated_at: now,
  });
  return { clientId: client.id, apiKey: await addKey(t, client.id) };
}

/** Every stored API key record (to check that only hashes are stored). */
export async function allApiKeyRows(t: TestApp): Promise<Array<Selectable<ApiKeysTable>>> {
  return t.resources.database.db.selectFrom('api_keys').selectAll().execute();
}

/** A manual Project owned by the account, in its default Workspace. */
export async function createOwnedProject(t: TestApp, accountId: string): Promise<ProjectRow> {
  const db = t.resources.database.db;
  const workspace = await accountsRepository.findDefaultWorkspace(db, accountId);
  if (!workspace) throw new Error(`account ${accountId} has no default Workspace`);
  const now = Date.now();
  return projectsRepository.insertProject(db, {
    id: newId(ID_PREFIX.project),
    workspace_id: workspace.id,
    account_id: accountId,
    name: 'Factory project',
    description: null,
    kind: 'manual',
    status: 'active',
    settings_override: null,
    created_at: now,
    updated_at: now,
  });
}

/** A session of the account in a new Project of its own, written through the repositories. */
export async function createOwnedSession(t: TestApp, accountId: string): Promise<SessionRow> {
  const project = await createOwnedProject(t, accountId);
  const now = Date.now();
  return sessionsRepository.insertSession(t.resources.database.db, {
    id: newId(ID_PREFIX.session),
    account_id: accountId,
    workspace_id: project.workspace_id,
    project_id: project.id,
    title: 'Factory session',
    status: 'active',
    character_id: null,
    character_version_id: null,
    user_card_id: null,
    preset_id: null,
    worldbook_ids: JSON.stringify([]),
    regex_profile_id: null,
    created_by_client_id: null,
    archived_at: null,
    created_at: now,
    updated_at: now,
  });
}

/** The actor of an account's default Client. */
export const accountActor = (
  a: { accountId: string; clientId: string },
  role: 'admin' | 'user' = 'user',
): Actor => ({
  kind: 'account',
  accountId: a.accountId,
  accountRole: role,
  clientId: a.clientId,
  clientIsDefault: true,
});

/** Writes an operation log row through the real writer, as a use case would. */
export async function recordOperationLog(
  t: TestApp,
  actor: Actor | null,
  input: OperationLogInput,
): Promise<OperationLogRow> {
  return t.app.get(OperationLogWriter).write(t.resources.database.db, actor, input);
}

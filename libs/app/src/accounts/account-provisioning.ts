import { ID_PREFIX, newId } from '@hearth/domain';
import { accountsRepository, type AccountRow, type Tx } from '@hearth/persistence';

export const DEFAULT_ACCOUNT_ID = 'default';

/**
 * Creates an account together with what every account has from birth: its default Client and its
 * default Workspace. Runs inside the caller's transaction.
 */
export async function provisionAccount(
  tx: Tx,
  input: { id?: string; name: string; role: 'admin' | 'user'; isDefault?: boolean },
  now = Date.now(),
): Promise<AccountRow> {
  const account = await accountsRepository.insertAccount(tx, {
    id: input.id ?? newId(ID_PREFIX.account),
    name: input.name,
    role: input.role,
    status: 'active',
    is_default: input.isDefault ?? false,
    created_at: now,
    updated_at: now,
  });
  await accountsRepository.insertClient(tx, {
    id: newId(ID_PREFIX.client),
    account_id: account.id,
    name: 'Default client',
    status: 'active',
    is_default: true,
    created_at: now,
    updated_at: now,
  });
  await accountsRepository.insertWorkspace(tx, {
    id: newId(ID_PREFIX.workspace),
    account_id: account.id,
    name: 'Default workspace',
    is_default: true,
    created_at: now,
    updated_at: now,
  });
  return account;
}

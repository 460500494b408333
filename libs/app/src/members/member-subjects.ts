import { DomainError, type MemberSubjectRef, type ResolvedMemberSubject } from '@hearth/domain';
import { accountsRepository, membersRepository, type Executor } from '@hearth/persistence';

/**
 * Looks a member subject up for an add: an account subject must exist and be active (404 / 409
 * `project_member_account_not_found`), a Client subject likewise (404 / 409
 * `project_member_client_not_found`, spec 1 "Errors"). Clients of any account may be added.
 */
export async function resolveSubjectForAdd(
  db: Executor,
  ref: MemberSubjectRef,
): Promise<ResolvedMemberSubject> {
  if (ref.subjectType === 'account') {
    const account = await accountsRepository.findAccount(db, ref.subjectId);
    if (!account)
      throw new DomainError('project_member_account_not_found', 404, 'The subject account does not exist');
    if (account.status !== 'active') {
      throw new DomainError('project_member_account_not_found', 409, 'The subject account is disabled');
    }
    return { ...ref, accountId: account.id, clientId: null, clientIsDefault: false };
  }
  const client = await membersRepository.findSubjectClient(db, ref.subjectId);
  if (!client)
    throw new DomainError('project_member_client_not_found', 404, 'The subject Client does not exist');
  if (client.status !== 'active')
    throw new DomainError('project_member_client_not_found', 409, 'The subject Client is disabled');
  return { ...ref, accountId: client.account_id, clientId: client.id, clientIsDefault: client.is_default };
}

/** The subject of a removal, as far as it is known (a missing Client is simply not the owner). */
export async function resolveSubjectForRemove(
  db: Executor,
  ref: MemberSubjectRef,
): Promise<ResolvedMemberSubject> {
  if (ref.subjectType === 'account')
    return { ...ref, accountId: ref.subjectId, clientId: null, clientIsDefault: false };
  const client = await membersRepository.findSubjectClient(db, ref.subjectId);
  return {
    ...ref,
    accountId: client?.account_id ?? '',
    clientId: ref.subjectId,
    clientIsDefault: client?.is_default ?? false,
  };
}

/** Postgres unique violation on the one-active-role index (two adds of one subject racing). */
export const isActiveRoleConflict = (error: unknown): boolean =>
  typeof error === 'object' &&
  error !== null &&
  (error as { code?: unknown }).code === '23505' &&
  String((error as { constraint?: unknown }).constraint ?? (error as { message?: unknown }).message).includes(
    'project_members_one_active_role',
  );

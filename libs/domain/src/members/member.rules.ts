import { DomainError, validationError } from '../errors';

/**
 * Project member rules (spec 1 "Members"): which roles may be granted, which subjects exist, and the
 * owner's protections. The owner role comes from Project ownership; these routes never grant,
 * downgrade or remove it.
 */
export const GRANTABLE_MEMBER_ROLES = ['observer', 'deriver'] as const;
export type GrantableMemberRole = (typeof GRANTABLE_MEMBER_ROLES)[number];

export const MEMBER_SUBJECT_TYPES = ['account', 'client'] as const;
export type MemberSubjectType = (typeof MEMBER_SUBJECT_TYPES)[number];

export interface MemberSubjectRef {
  subjectType: MemberSubjectType;
  subjectId: string;
}

/** The subject as stored: the account it belongs to and, for a Client, whether it is a default Client. */
export interface ResolvedMemberSubject extends MemberSubjectRef {
  accountId: string;
  clientId: string | null;
  clientIsDefault: boolean;
}

/** `owner` answers 400 `project_member_owner_role_conflict`; anything else but observer/deriver 400 `project_member_role_not_supported`. */
export function requireGrantableRole(role: string): GrantableMemberRole {
  if (role === 'owner') {
    throw new DomainError(
      'project_member_owner_role_conflict',
      400,
      'The owner role comes from Project ownership and cannot be granted',
    );
  }
  if (!(GRANTABLE_MEMBER_ROLES as readonly string[]).includes(role)) {
    throw new DomainError(
      'project_member_role_not_supported',
      400,
      `Role "${role}" is not supported; use observer or deriver`,
    );
  }
  return role as GrantableMemberRole;
}

export function requireSubjectType(subjectType: string): MemberSubjectType {
  if (!(MEMBER_SUBJECT_TYPES as readonly string[]).includes(subjectType)) {
    throw new DomainError(
      'project_member_subject_invalid',
      400,
      `subject_type must be account or client, not "${subjectType}"`,
    );
  }
  return subjectType as MemberSubjectType;
}

/**
 * The subject of an add request: either `account_id`, or `subject_type` with `subject_id`. Giving
 * both forms, neither, or half of the second is a 400 `validation_error` naming the fields.
 */
export function parseMemberSubject(input: {
  account_id?: string | null;
  subject_type?: string | null;
  subject_id?: string | null;
}): MemberSubjectRef {
  const hasAccount = input.account_id !== undefined && input.account_id !== null;
  const hasType = input.subject_type !== undefined && input.subject_type !== null;
  const hasId = input.subject_id !== undefined && input.subject_id !== null;
  if (hasAccount && (hasType || hasId)) {
    throw validationError('Give either account_id or subject_type with subject_id, not both', {
      fields: [
        { field: 'account_id', problems: ['account_id cannot be combined with subject_type/subject_id'] },
      ],
    });
  }
  if (hasAccount) return { subjectType: 'account', subjectId: input.account_id as string };
  if (!hasType && !hasId) {
    throw validationError('account_id, or subject_type with subject_id, is required', {
      fields: [{ field: 'account_id', problems: ['account_id or subject_type with subject_id is required'] }],
    });
  }
  if (!hasType || !hasId) {
    const missing = hasType ? 'subject_id' : 'subject_type';
    throw validationError(`${missing} is required with ${hasType ? 'subject_type' : 'subject_id'}`, {
      fields: [{ field: missing, problems: [`${missing} is required`] }],
    });
  }
  return {
    subjectType: requireSubjectType(input.subject_type as string),
    subjectId: input.subject_id as string,
  };
}

/** Whether a subject is the Project owner itself: its account, or its account's default Client. */
export function isOwnerSubject(
  ownerAccountId: string,
  subject: ResolvedMemberSubject,
): 'account' | 'default_client' | null {
  if (subject.subjectType === 'account' && subject.subjectId === ownerAccountId) return 'account';
  if (subject.subjectType === 'client' && subject.accountId === ownerAccountId && subject.clientIsDefault)
    return 'default_client';
  return null;
}

/**
 * Adding the owner account answers 400 `project_member_owner_role_conflict`; adding the owner's
 * default Client 400 `project_member_default_client_owner_conflict`. The owner account's other
 * Clients may be added: they get no owner rights by themselves.
 */
export function assertAddableSubject(ownerAccountId: string, subject: ResolvedMemberSubject): void {
  const owner = isOwnerSubject(ownerAccountId, subject);
  if (owner === 'account') {
    throw new DomainError(
      'project_member_owner_role_conflict',
      400,
      'The Project owner already holds the owner role, which cannot be changed',
    );
  }
  if (owner === 'default_client') {
    throw new DomainError(
      'project_member_default_client_owner_conflict',
      400,
      "The owner's default Client acts as the owner and cannot be added as a member",
    );
  }
}

/** Removing the owner (its account or its default Client) answers 400 `project_member_owner_remove_not_supported`. */
export function assertRemovableSubject(ownerAccountId: string, subject: ResolvedMemberSubject): void {
  if (isOwnerSubject(ownerAccountId, subject)) {
    throw new DomainError(
      'project_member_owner_remove_not_supported',
      400,
      'The Project owner cannot be removed',
    );
  }
}

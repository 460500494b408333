import { DomainError } from '../errors';
import {
  assertAddableSubject,
  assertRemovableSubject,
  parseMemberSubject,
  requireGrantableRole,
  requireSubjectType,
  type ResolvedMemberSubject,
} from './member.rules';

const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return (error as DomainError).code;
  }
};

const subject = (over: Partial<ResolvedMemberSubject>): ResolvedMemberSubject => ({
  subjectType: 'account',
  subjectId: 'acc_b',
  accountId: 'acc_b',
  clientId: null,
  clientIsDefault: false,
  ...over,
});

describe('member roles', () => {
  it('grants observer and deriver', () => {
    expect(requireGrantableRole('observer')).toBe('observer');
    expect(requireGrantableRole('deriver')).toBe('deriver');
  });

  it('refuses owner with owner_role_conflict and anything else with role_not_supported', () => {
    expect(codeOf(() => requireGrantableRole('owner'))).toBe('project_member_owner_role_conflict');
    expect(codeOf(() => requireGrantableRole('admin'))).toBe('project_member_role_not_supported');
    expect(codeOf(() => requireGrantableRole('Observer'))).toBe('project_member_role_not_supported');
    expect(codeOf(() => requireGrantableRole(''))).toBe('project_member_role_not_supported');
  });
});

describe('member subjects', () => {
  it('takes account_id as an account subject', () => {
    expect(parseMemberSubject({ account_id: 'acc_x' })).toEqual({
      subjectType: 'account',
      subjectId: 'acc_x',
    });
  });

  it('takes subject_type with subject_id', () => {
    expect(parseMemberSubject({ subject_type: 'client', subject_id: 'cli_x' })).toEqual({
      subjectType: 'client',
      subjectId: 'cli_x',
    });
    expect(parseMemberSubject({ subject_type: 'account', subject_id: 'acc_x' })).toEqual({
      subjectType: 'account',
      subjectId: 'acc_x',
    });
  });

  it('refuses an unknown subject_type with subject_invalid', () => {
    expect(codeOf(() => parseMemberSubject({ subject_type: 'group', subject_id: 'x' }))).toBe(
      'project_member_subject_invalid',
    );
    expect(codeOf(() => requireSubjectType('workspace'))).toBe('project_member_subject_invalid');
    expect(requireSubjectType('client')).toBe('client');
  });

  it('refuses both forms, neither, or half a pair with validation_error', () => {
    expect(
      codeOf(() => parseMemberSubject({ account_id: 'a', subject_type: 'account', subject_id: 'a' })),
    ).toBe('validation_error');
    expect(codeOf(() => parseMemberSubject({}))).toBe('validation_error');
    expect(codeOf(() => parseMemberSubject({ subject_type: 'client' }))).toBe('validation_error');
    expect(codeOf(() => parseMemberSubject({ subject_id: 'cli_x' }))).toBe('validation_error');
  });
});

describe('owner protections', () => {
  it('refuses adding the owner account and its default Client', () => {
    expect(
      codeOf(() => assertAddableSubject('acc_o', subject({ subjectId: 'acc_o', accountId: 'acc_o' }))),
    ).toBe('project_member_owner_role_conflict');
    expect(
      codeOf(() =>
        assertAddableSubject(
          'acc_o',
          subject({
            subjectType: 'client',
            subjectId: 'cli_d',
            accountId: 'acc_o',
            clientId: 'cli_d',
            clientIsDefault: true,
          }),
        ),
      ),
    ).toBe('project_member_default_client_owner_conflict');
  });

  it("allows the owner account's other Clients and other accounts", () => {
    expect(
      codeOf(() =>
        assertAddableSubject(
          'acc_o',
          subject({ subjectType: 'client', subjectId: 'cli_2', accountId: 'acc_o', clientId: 'cli_2' }),
        ),
      ),
    ).toBeUndefined();
    expect(codeOf(() => assertAddableSubject('acc_o', subject({})))).toBeUndefined();
    expect(
      codeOf(() =>
        assertAddableSubject(
          'acc_o',
          subject({
            subjectType: 'client',
            subjectId: 'cli_b',
            accountId: 'acc_b',
            clientId: 'cli_b',
            clientIsDefault: true,
          }),
        ),
      ),
    ).toBeUndefined();
  });

  it('refuses removing the owner account or its default Client', () => {
    expect(
      codeOf(() => assertRemovableSubject('acc_o', subject({ subjectId: 'acc_o', accountId: 'acc_o' }))),
    ).toBe('project_member_owner_remove_not_supported');
    expect(
      codeOf(() =>
        assertRemovableSubject(
          'acc_o',
          subject({
            subjectType: 'client',
            subjectId: 'cli_d',
            accountId: 'acc_o',
            clientId: 'cli_d',
            clientIsDefault: true,
          }),
        ),
      ),
    ).toBe('project_member_owner_remove_not_supported');
    expect(codeOf(() => assertRemovableSubject('acc_o', subject({})))).toBeUndefined();
  });
});

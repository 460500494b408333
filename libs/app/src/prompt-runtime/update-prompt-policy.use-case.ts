import { Inject, Injectable } from '@nestjs/common';
import { canonicalJson, DomainError } from '@hearth/domain';
import {
  mergePolicyPatch,
  prunePolicyValue,
  requirePolicyPatch,
  type PolicySection,
} from '@hearth/domain/prompt/policy';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import { inTransaction, promptRuntimeRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import {
  promptRuntimeLogScope,
  requirePromptRuntimeTarget,
  promptRuntimeWriterId,
} from './prompt-runtime-access';
import { toPromptPolicyView, type PromptPolicyView } from './prompt-policy-view';

export type UpdatePromptPolicyInput = Partial<Record<PolicySection, unknown>> & {
  /** When given, the write happens only if the level's envelope is at this version (0: never written). */
  expected_version?: number;
};

/**
 * `PATCH .../prompt-runtime/policy` at session level (`branchId` null) or on a branch overlay: sections
 * deep-merge into the stored value, `null` clears, absent sections stay (spec 2). The session row is
 * locked for the write, so concurrent PATCHes apply one after another and each bumps `version`; with
 * `expected_version` a stale writer gets 409 `policy_conflict`. A PATCH that leaves the stored value as it
 * was writes nothing. Each write logs `update_prompt_policy` (refs: the version only).
 */
@Injectable()
export class UpdatePromptPolicyUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(
    actor: Actor,
    sessionId: string,
    branchId: string | null,
    input: UpdatePromptPolicyInput,
  ): Promise<PromptPolicyView> {
    const sections = requirePolicyPatch(input);
    return inTransaction(this.db, async ({ tx }) => {
      const target = await requirePromptRuntimeTarget(this.access, tx, actor, sessionId, branchId, 'write');
      const before = await promptRuntimeRepository.findPolicy(tx, target.scope);
      const currentVersion = before?.version ?? 0;
      if (input.expected_version !== undefined && input.expected_version !== currentVersion) {
        throw new DomainError(
          'policy_conflict',
          409,
          `The policy is at version ${currentVersion}, not ${input.expected_version}; read it and try again`,
          { expected_version: input.expected_version, current_version: currentVersion },
        );
      }
      const stored = before?.value ?? {};
      const value = prunePolicyValue(mergePolicyPatch(stored, sections));
      let own = before;
      if (canonicalJson(value) !== canonicalJson(stored)) {
        const now = Date.now();
        own = before
          ? await promptRuntimeRepository.updatePolicy(tx, target.scope, {
              value: JSON.stringify(value),
              version: before.version + 1,
              updated_at: now,
              updated_by: promptRuntimeWriterId(actor),
            })
          : await promptRuntimeRepository.insertPolicy(tx, {
              account_id: target.session.account_id,
              session_id: target.session.id,
              branch_id: target.scope.branchId,
              value: JSON.stringify(value),
              version: 1,
              updated_at: now,
              updated_by: promptRuntimeWriterId(actor),
            });
        await this.logs.write(tx, actor, {
          action: 'update_prompt_policy',
          ...promptRuntimeLogScope(target),
          target_type: target.branch ? 'branch_prompt_policy' : 'session_prompt_policy',
          target_id: target.branch?.id ?? target.session.id,
          before_ref: { version: currentVersion },
          after_ref: { version: own.version },
          metadata: { scope: target.branch ? 'branch' : 'session', sections: Object.keys(sections) },
        });
      }
      if (target.scope.branchId === null) return toPromptPolicyView(own, { session: own });
      const session = await promptRuntimeRepository.findPolicy(tx, {
        sessionId: target.session.id,
        branchId: null,
      });
      return toPromptPolicyView(own, { session, branch: own });
    });
  }
}

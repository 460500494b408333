import { Inject, Injectable } from '@nestjs/common';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import {
  inTransaction,
  promptRuntimeRepository,
  type Db,
  type PromptInjectionRow,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { injectionNotFound, injectionRef } from './injection-rules';
import { promptRuntimeLogScope, requirePromptRuntimeTarget } from './prompt-runtime-access';

/**
 * `DELETE .../prompt-runtime/injections/:injectionId`: removes the record and answers it as it was.
 * 404 `injection_not_found` like PATCH. Logs `prompt_injection.delete` (lengths only).
 */
@Injectable()
export class DeletePromptInjectionUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(
    actor: Actor,
    sessionId: string,
    branchId: string | null,
    injectionId: string,
  ): Promise<PromptInjectionRow> {
    return inTransaction(this.db, async ({ tx }) => {
      const target = await requirePromptRuntimeTarget(this.access, tx, actor, sessionId, branchId, 'write');
      const row = await promptRuntimeRepository.findInjection(tx, target.scope, injectionId, Date.now());
      if (!row) throw injectionNotFound();
      await promptRuntimeRepository.deleteInjection(tx, row.id);
      await this.logs.write(tx, actor, {
        action: 'prompt_injection.delete',
        ...promptRuntimeLogScope(target),
        target_type: 'prompt_injection',
        target_id: row.id,
        before_ref: injectionRef(row),
      });
      return row;
    });
  }
}

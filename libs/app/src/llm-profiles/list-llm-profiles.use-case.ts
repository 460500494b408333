import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { llmProfilesRepository, type Db, type LlmProfileRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';

export interface ListLlmProfilesInput {
  include_deleted?: boolean;
  status?: LlmProfileRow['status'];
}

/**
 * `GET /llm-profiles`: the account's profiles, oldest first, no paging. Deleted profiles only with
 * `include_deleted=true` or `status=deleted`.
 */
@Injectable()
export class ListLlmProfilesUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, input: ListLlmProfilesInput): Promise<LlmProfileRow[]> {
    return llmProfilesRepository.listForAccount(this.db, actor.accountId, {
      includeDeleted: input.include_deleted === true || input.status === 'deleted',
      status: input.status,
    });
  }
}

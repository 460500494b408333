import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { llmProfilesRepository, type Db, type LlmProfileRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { profileNotFound } from './llm-profile-rules';

/** `GET /llm-profiles/:id`: a profile of the account in any status (deleted ones too); else 404 `profile_not_found`. */
@Injectable()
export class GetLlmProfileUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, id: string): Promise<LlmProfileRow> {
    const profile = await llmProfilesRepository.findForAccount(this.db, actor.accountId, id);
    if (!profile) throw profileNotFound();
    return profile;
  }
}

import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { inboxRepository, type Db, type InboxEntryRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { InboxAccess, inboxEntryNotFound } from './inbox-access';

/** `GET /projects/:id/inbox/:entry_id` (every member); an entry of another Project is not found. */
@Injectable()
export class GetInboxEntryUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: InboxAccess,
  ) {}

  async execute(actor: Actor, projectId: string, entryId: string): Promise<InboxEntryRow> {
    const { project } = await this.access.forRead(actor, projectId);
    const entry = await inboxRepository.findInProject(this.db, project.id, entryId);
    if (!entry) throw inboxEntryNotFound();
    return entry;
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { ID_PREFIX, initialStatus, newId, requireDomain, serialiseValue } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { derivedOutputsRepository, inTransaction, type Db, type DerivedOutputRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { DerivedOutputAccess } from './derived-output-access';
import { DerivedOutputJournal } from './derived-output-journal';
import { validateDerivedOutputSources } from './derived-output-sources';

export interface CreateDerivedOutputInput {
  domain: string;
  source_session_id?: string | null;
  source_floor_id?: string | null;
  source_page_id?: string | null;
  /** Any JSON; `{}` when absent. */
  value?: unknown;
  status?: string;
}

/**
 * `POST /projects/:id/derived-outputs` (owner, deriver): row, operation log and Project event in one
 * transaction; the event wake-up is published after commit.
 */
@Injectable()
export class CreateDerivedOutputUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: DerivedOutputAccess,
    private readonly journal: DerivedOutputJournal,
  ) {}

  async execute(actor: Actor, projectId: string, input: CreateDerivedOutputInput): Promise<DerivedOutputRow> {
    return inTransaction(this.db, async (uow) => {
      const { project } = await this.access.forWrite(actor, projectId, uow.tx);
      const domain = requireDomain(input.domain);
      const status = initialStatus(input.status);
      const value = serialiseValue(input.value === undefined ? {} : input.value);
      const sources = {
        source_session_id: input.source_session_id ?? null,
        source_floor_id: input.source_floor_id ?? null,
        source_page_id: input.source_page_id ?? null,
      };
      await validateDerivedOutputSources(uow.tx, project, sources);
      const now = Date.now();
      const entry = await derivedOutputsRepository.insert(uow.tx, {
        id: newId(ID_PREFIX.derivedOutput),
        workspace_id: project.workspace_id,
        project_id: project.id,
        account_id: project.account_id,
        owner_account_id: actor.accountId,
        created_by_client_id: actor.clientId,
        ...sources,
        domain,
        value: value.json,
        value_byte_count: value.byteCount,
        status,
        created_at: now,
        updated_at: now,
      });
      const changed = [
        'domain',
        'status',
        'value',
        ...Object.keys(sources).filter((k) => sources[k as keyof typeof sources] !== null),
      ];
      await this.journal.record(uow, actor, project, 'create', entry, changed, null);
      return entry;
    });
  }
}

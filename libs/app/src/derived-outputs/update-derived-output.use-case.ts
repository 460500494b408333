import { Inject, Injectable } from '@nestjs/common';
import { canonicalJson, nextStatus, serialiseValue, updateAction, validationError } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { derivedOutputsRepository, inTransaction, type Db, type DerivedOutputRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { DerivedOutputAccess, derivedOutputNotFound } from './derived-output-access';
import { DerivedOutputJournal } from './derived-output-journal';

export interface UpdateDerivedOutputInput {
  /** Any JSON, `null` included; absent means unchanged. */
  value?: unknown;
  status?: string;
}

/**
 * `PATCH /projects/:id/derived-outputs/:item_id` (owner; deriver on its own entries): value and/or
 * status along the state table. A move to `archived` is recorded as an archive. A PATCH that changes
 * nothing (same value, same status) writes nothing and returns the entry.
 */
@Injectable()
export class UpdateDerivedOutputUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: DerivedOutputAccess,
    private readonly journal: DerivedOutputJournal,
  ) {}

  async execute(
    actor: Actor,
    projectId: string,
    itemId: string,
    input: UpdateDerivedOutputInput,
  ): Promise<DerivedOutputRow> {
    if (input.value === undefined && input.status === undefined) {
      throw validationError('Give at least one of value, status', {
        fields: [{ field: 'value', problems: ['at least one of value, status is required'] }],
      });
    }
    return inTransaction(this.db, async (uow) => {
      const grant = await this.access.forChange(actor, projectId, uow.tx);
      const entry = await derivedOutputsRepository.findInProjectForUpdate(uow.tx, grant.project.id, itemId);
      if (!entry) throw derivedOutputNotFound();
      this.access.assertMayChange(actor, grant, entry);
      const status = nextStatus(entry.status, input.status);
      const value = input.value === undefined ? null : serialiseValue(input.value);
      const changed: string[] = [];
      if (value && canonicalJson(input.value) !== canonicalJson(entry.value)) changed.push('value');
      if (status !== entry.status) changed.push('status');
      if (changed.length === 0) return entry;
      const updated = await derivedOutputsRepository.update(uow.tx, entry.id, {
        status,
        ...(changed.includes('value') && value
          ? { value: value.json, value_byte_count: value.byteCount }
          : {}),
        updated_at: Date.now(),
      });
      await this.journal.record(
        uow,
        actor,
        grant.project,
        updateAction(entry.status, status),
        updated,
        changed,
        entry.status,
      );
      return updated;
    });
  }
}

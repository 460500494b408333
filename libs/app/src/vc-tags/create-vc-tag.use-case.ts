import { Inject, Injectable } from '@nestjs/common';
import { DomainError, ID_PREFIX, newId } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import {
  assetVersionsRepository,
  floorsRepository,
  inTransaction,
  isUniqueViolation,
  vcTagsRepository,
  type AssetKind,
  type Db,
  type Tx,
  type VcTagRow,
  type VcTagTargetType,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { serialiseTagMetadata, vcTagExists, vcTagRef } from './vc-tag-rules';

export interface CreateVcTagInput {
  name: string;
  target_type: VcTagTargetType;
  target_id: string;
  /** For a floor: derived from the floor (a different one is 400 `invalid_tag_session`; null = not given). */
  session_id?: string | null;
  metadata?: unknown;
}

interface ResolvedTarget {
  sessionId: string | null;
  floorId: string | null;
  assetKind: AssetKind | null;
}

/**
 * `POST /vc-tags`: names a floor or an asset version of the caller's account. Checks run: body →
 * target (404 `floor_not_found` / `asset_version_not_found`) → session (400 `invalid_tag_session`,
 * 404 `session_not_found`) → name (409 `tag_exists`, also when two creates race: the unique index
 * decides). The `create_tag` log is written first; the tag's `created_by_operation_id` is its id.
 */
@Injectable()
export class CreateVcTagUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly logs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, input: CreateVcTagInput): Promise<VcTagRow> {
    const metadata = serialiseTagMetadata(input.metadata);
    try {
      return await inTransaction(this.db, async ({ tx }) => {
        const target = await this.resolveTarget(tx, actor, input);
        if (await vcTagsRepository.findByName(tx, actor.accountId, input.name)) throw vcTagExists(input.name);
        const id = newId(ID_PREFIX.vcTag);
        const draft = {
          id,
          name: input.name,
          target_type: input.target_type,
          target_id: input.target_id,
          target_asset_kind: target.assetKind,
          session_id: target.sessionId,
        };
        const log = await this.logs.write(tx, actor, {
          action: 'create_tag',
          target_type: 'vc_tag',
          target_id: id,
          session_id: target.sessionId,
          floor_id: target.floorId,
          after_ref: vcTagRef(draft),
          metadata: { has_metadata: metadata !== null },
        });
        return vcTagsRepository.insert(tx, {
          ...draft,
          account_id: actor.accountId,
          metadata,
          created_by_operation_id: log.id,
          created_at: Date.now(),
        });
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw vcTagExists(input.name);
      throw error;
    }
  }

  private async resolveTarget(tx: Tx, actor: Actor, input: CreateVcTagInput): Promise<ResolvedTarget> {
    const given = input.session_id ?? null;
    if (input.target_type === 'floor') {
      const floor = await floorsRepository.findFloorOfAccount(tx, actor.accountId, input.target_id);
      if (!floor) throw new DomainError('floor_not_found', 404, 'Floor not found');
      if (given !== null && given !== floor.session_id) {
        throw new DomainError('invalid_tag_session', 400, "session_id is not the floor's session", {
          session_id: given,
          floor_session_id: floor.session_id,
        });
      }
      return { sessionId: floor.session_id, floorId: floor.id, assetKind: null };
    }
    const version = await assetVersionsRepository.findOfAccount(tx, actor.accountId, input.target_id);
    if (!version) throw new DomainError('asset_version_not_found', 404, 'Asset version not found');
    if (given !== null && !(await vcTagsRepository.sessionExistsInAccount(tx, actor.accountId, given)))
      throw new DomainError('session_not_found', 404, 'Session not found');
    return { sessionId: given, floorId: null, assetKind: version.asset_kind };
  }
}

import { Injectable } from '@nestjs/common';
import {
  INBOX_BODY_MAX_BYTES,
  jsonByteCount,
  truncatedView,
  type AgentWritableTarget,
  type AgentWriteNames,
} from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import type { ProjectEventRow } from '@hearth/persistence';
import { CreateDerivedOutputUseCase } from '../derived-outputs/create-derived-output.use-case';
import type { WriteOrigin } from '../events/write-origin';
import { CreateInboxEntryUseCase } from '../inbox/create-inbox-entry.use-case';

export interface AgentRunWrite {
  target: AgentWritableTarget;
  id: string;
}

export interface AgentRunDeliveryInput {
  /** The binding's account acting through its default Client. */
  actor: Actor;
  projectId: string;
  targets: readonly AgentWritableTarget[];
  names: AgentWriteNames;
  output: unknown;
  sourceSessionId: string | null;
  sourceFloorId: string | null;
  origin: WriteOrigin;
  /** What an earlier attempt of the job already wrote (its `*.created` events): not written again. */
  earlier: ReadonlyArray<Pick<ProjectEventRow, 'type' | 'payload'>>;
}

const earlierId = (
  earlier: AgentRunDeliveryInput['earlier'],
  type: string,
  field: string,
): string | undefined => {
  const event = earlier.find((e) => e.type === type);
  const id = (event?.payload as Record<string, unknown> | undefined)?.[field];
  return typeof id === 'string' ? id : undefined;
};

/**
 * The writes of a run (dry_run=false), each through its feature's own write path, so each has its
 * checks, operation log and Project event in one transaction: a derived output
 * (CreateDerivedOutputUseCase), then an inbox entry pointing at it (CreateInboxEntryUseCase). The
 * events carry source `runtime_job` (agents never trigger on them) and the job as correlation id,
 * which is also how a retried attempt finds what it already wrote. A refusal (Project archived,
 * value over 256 KiB, the account no longer a writer) is a DomainError below 500: the job is dead-lettered.
 */
@Injectable()
export class AgentRunDelivery {
  constructor(
    private readonly derivedOutputs: CreateDerivedOutputUseCase,
    private readonly inbox: CreateInboxEntryUseCase,
  ) {}

  async deliver(input: AgentRunDeliveryInput): Promise<AgentRunWrite[]> {
    const writes: AgentRunWrite[] = [];
    let derivedOutputId: string | null = null;
    for (const target of input.targets) {
      if (target === 'derived_output') {
        const id =
          earlierId(input.earlier, 'derived_output.created', 'derived_output_id') ??
          (
            await this.derivedOutputs.execute(
              input.actor,
              input.projectId,
              {
                domain: input.names.domain,
                status: input.names.status,
                value: input.output,
                source_session_id: input.sourceSessionId,
                source_floor_id: input.sourceFloorId,
              },
              input.origin,
            )
          ).id;
        derivedOutputId = id;
        writes.push({ target, id });
      } else {
        const id =
          earlierId(input.earlier, 'inbox_entry.created', 'inbox_entry_id') ??
          (
            await this.inbox.execute(
              input.actor,
              input.projectId,
              {
                kind: input.names.inboxKind,
                title: input.names.inboxTitle,
                // An output too large for an entry (64 KiB) is shown truncated; the derived output holds it whole.
                body:
                  jsonByteCount(input.output) <= INBOX_BODY_MAX_BYTES
                    ? input.output
                    : truncatedView(input.output),
                source_session_id: input.sourceSessionId,
                source_floor_id: input.sourceFloorId,
                derived_output_id: derivedOutputId,
              },
              input.origin,
            )
          ).id;
        writes.push({ target, id });
      }
    }
    return writes;
  }
}

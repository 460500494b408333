import { Injectable } from '@nestjs/common';
import {
  candidateMessages,
  INBOX_BODY_MAX_BYTES,
  jsonByteCount,
  truncatedView,
  type AgentWritableTarget,
  type AgentWriteNames,
  type SkippedTarget,
} from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import type { ProjectEventRow } from '@hearth/persistence';
import { CreateDerivedOutputUseCase } from '../derived-outputs/create-derived-output.use-case';
import type { WriteOrigin } from '../events/write-origin';
import { CreateInboxEntryUseCase } from '../inbox/create-inbox-entry.use-case';
import { StageAgentPageCandidateUseCase } from '../page-candidates/stage-agent-page-candidate.use-case';

export interface AgentRunWrite {
  target: AgentWritableTarget;
  id: string;
}

export interface AgentRunDelivered {
  writes: AgentRunWrite[];
  /** Targets that had nothing to write to (`page_staged_write` without a reply page). */
  skipped: SkippedTarget[];
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
  /** The job: a page candidate is found again by it on a retried attempt. */
  jobId: string;
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
 * (CreateDerivedOutputUseCase), then an inbox entry pointing at it (CreateInboxEntryUseCase), then a
 * candidate for the job's floor's reply page (StageAgentPageCandidateUseCase). The
 * events carry source `runtime_job` (agents never trigger on them) and the job as correlation id,
 * which is also how a retried attempt finds what it already wrote. A refusal (Project archived,
 * value over 256 KiB, the account no longer a writer) is a DomainError below 500: the job is dead-lettered.
 */
@Injectable()
export class AgentRunDelivery {
  constructor(
    private readonly derivedOutputs: CreateDerivedOutputUseCase,
    private readonly inbox: CreateInboxEntryUseCase,
    private readonly pageCandidates: StageAgentPageCandidateUseCase,
  ) {}

  async deliver(input: AgentRunDeliveryInput): Promise<AgentRunDelivered> {
    const writes: AgentRunWrite[] = [];
    const skipped: SkippedTarget[] = [];
    let derivedOutputId: string | null = null;
    for (const target of input.targets) {
      if (target === 'page_staged_write') {
        const candidate =
          input.sourceFloorId === null
            ? undefined
            : await this.pageCandidates.execute(input.actor, {
                projectId: input.projectId,
                floorId: input.sourceFloorId,
                messages: candidateMessages(input.output),
                reason: input.names.stagedWriteReason,
                jobId: input.jobId,
                origin: input.origin,
              });
        if (candidate) writes.push({ target, id: candidate.id });
        else skipped.push({ target, reason: 'no_target_page' });
      } else if (target === 'derived_output') {
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
    return { writes, skipped };
  }
}

import { Inject, Injectable } from '@nestjs/common';
import {
  ID_PREFIX,
  initialStatus,
  newId,
  requireDomain,
  serialiseValue,
  type DerivedOutputStatus,
} from '@hearth/domain';
import { CAPABILITIES, grantFor, type Actor, type ProjectRole } from '@hearth/permissions';
import {
  derivedOutputWritesRepository,
  type CreateDerivedOutputOutcome,
  type CreateDerivedOutputStatement,
  type Db,
  type DerivedOutputRow,
  type StatementExecutor,
} from '@hearth/persistence';
import { DB, DB_PIPELINE } from '@hearth/platform';
import { ProjectEventWriter } from '../events/project-event-writer';
import type { WriteOrigin } from '../events/write-origin';
import {
  DerivedOutputAccess,
  WRITE_CAPABILITY,
  WRITE_DENIED_CODE,
  projectArchived,
} from './derived-output-access';
import { DerivedOutputJournal } from './derived-output-journal';
import { derivedOutputSourcesError, type DerivedOutputSources } from './derived-output-sources';
import { GroupCommit } from './group-commit';

export interface CreateDerivedOutputInput {
  domain: string;
  source_session_id?: string | null;
  source_floor_id?: string | null;
  source_page_id?: string | null;
  /** Any JSON; `{}` when absent. */
  value?: unknown;
  status?: string;
}

/** The roles that may create (the capability table's answer, handed to the statement). */
const WRITER_ROLES: readonly ProjectRole[] = CAPABILITIES[WRITE_CAPABILITY];

/**
 * Group commit of creates (see GroupCommit): at most 64 per statement, one per Project (so each
 * Project's counter is bumped once per statement and its sequences follow arrival order); a batch
 * held up for 50 ms (a lock) lets the next one start, at most 4 at once. Batch statements run on
 * the database's pipeline, and one batch of at least 4 creates may wait behind the one running
 * (docs/decisions.md "HTTP pipeline cost": 2 or 3 made the batches smaller and the route slower).
 */
const GROUP_COMMIT = { maxBatch: 64, stallMs: 50, maxInFlight: 4, pipelineMinBatch: 4 };

/**
 * `POST /projects/:id/derived-outputs` (owner, deriver): row, operation log and Project event in one
 * transaction; the event wake-up is published after commit.
 *
 * The write is one statement (derivedOutputWritesRepository.createWithJournal), hence one
 * transaction and one round trip: it reads the Project with the caller's role and the sources'
 * scopes, and inserts the entry, its log and its event only when all of them allow it. When it
 * writes nothing, the error is derived from what it read, in the order of the checks of every
 * derived output route: access (404 / 403), archived Project (409), then the sources (404 / 409).
 * Input errors (domain, status, value: 400 / 413) come after the access checks, so an invalid body
 * first runs the access check alone.
 *
 * Group commit: the statement goes through `batcher`. A create arriving while another create
 * statement is in flight waits for it (or, once enough creates wait, is sent pipelined behind it)
 * and is written together with the others that waited, by one statement
 * (derivedOutputWritesRepository.createBatchWithJournal) whose per-item outcome is exactly the
 * single statement's; a lone create runs the single statement at once.
 */
@Injectable()
export class CreateDerivedOutputUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(DB_PIPELINE) private readonly pipeline: StatementExecutor,
    private readonly access: DerivedOutputAccess,
    private readonly journal: DerivedOutputJournal,
    private readonly events: ProjectEventWriter,
  ) {}

  /** Creates of this process waiting for, or in, the statement that writes them. */
  readonly batcher = new GroupCommit<CreateDerivedOutputStatement, CreateDerivedOutputOutcome>(
    {
      key: (statement) => statement.projectId,
      one: (statement) => derivedOutputWritesRepository.createWithJournal(this.db, statement),
      many: (statements) =>
        derivedOutputWritesRepository.createBatchWithJournal(this.pipeline, WRITER_ROLES, statements),
    },
    GROUP_COMMIT,
  );

  /** `origin`: a job's write (an Agent Job's delivery), recorded as such in its event and log. */
  async execute(
    actor: Actor,
    projectId: string,
    input: CreateDerivedOutputInput,
    origin?: WriteOrigin,
  ): Promise<DerivedOutputRow> {
    let checked: { domain: string; status: DerivedOutputStatus; value: ReturnType<typeof serialiseValue> };
    try {
      checked = {
        domain: requireDomain(input.domain),
        status: initialStatus(input.status),
        value: serialiseValue(input.value === undefined ? {} : input.value),
      };
    } catch (inputError) {
      await this.access.forWrite(actor, projectId);
      throw inputError;
    }
    const sources: DerivedOutputSources = {
      source_session_id: input.source_session_id ?? null,
      source_floor_id: input.source_floor_id ?? null,
      source_page_id: input.source_page_id ?? null,
    };
    const now = Date.now();
    const entry = {
      id: newId(ID_PREFIX.derivedOutput),
      owner_account_id: actor.accountId,
      created_by_client_id: actor.clientId,
      domain: checked.domain,
      value: checked.value.json,
      value_byte_count: checked.value.byteCount,
      status: checked.status,
      created_at: now,
      updated_at: now,
    };
    const changed = [
      'domain',
      'status',
      'value',
      ...Object.keys(sources).filter((k) => sources[k as keyof DerivedOutputSources] !== null),
    ];
    const { log, event } = this.journal.projectScopedRows(
      actor,
      projectId,
      'create',
      { ...entry, ...sources },
      changed,
      null,
      origin,
    );
    const outcome = await this.batcher.submit({
      projectId,
      writer: actor,
      writerRoles: WRITER_ROLES,
      sources,
      entry,
      log,
      event,
    });
    if (outcome.entry && outcome.eventSequence !== undefined) {
      await this.events.wake(projectId, outcome.eventSequence);
      return outcome.entry;
    }
    const grant = grantFor(outcome.project, outcome.role, WRITE_CAPABILITY, {
      deniedCode: WRITE_DENIED_CODE,
    });
    if (grant.project.status === 'archived') throw projectArchived();
    const sourceError = derivedOutputSourcesError(grant.project, sources, {
      session: outcome.sessionScope,
      floor: outcome.floorScope,
      page: outcome.pageScope,
    });
    if (sourceError) throw sourceError;
    throw new Error(`derived output create on ${projectId}: nothing written and no rule refused it`);
  }
}

import {
  AGENT_RUN_CONTEXT_VALUE_MAX_BYTES,
  AGENT_RUN_READ_LIMIT,
  jsonByteCount,
  type AgentRead,
  type AgentRunPayload,
} from '@hearth/domain';
import {
  agentRunsRepository,
  conversationRepository,
  derivedOutputsRepository,
  sessionsRepository,
  type Executor,
  type JobRow,
  type ProjectEventRow,
} from '@hearth/persistence';
import { MAIN_BRANCH } from '../conversation/session-conversation';
import { readBranchHistory } from '../conversation/floor-reads';

/** An event as a run's context shows it: its summary as stored (never more than the event log holds). */
const eventView = (e: ProjectEventRow) => ({
  id: e.id,
  sequence: e.sequence,
  type: e.type,
  visibility: e.visibility,
  source: e.source,
  session_id: e.session_id,
  branch_id: e.branch_id,
  floor_id: e.floor_id,
  page_id: e.page_id,
  message_id: e.message_id,
  payload: e.payload,
  created_at: e.created_at,
});

export interface AgentRunContextInput {
  job: JobRow;
  payload: AgentRunPayload;
  /** The trigger event (an event run), already checked to be of the job's Project. */
  trigger: ProjectEventRow | null;
  agent: { type_key: string; type_name: string; binding_id: string; scope_kind: string };
  /** The effective `grants.reads`: the only reads besides the trigger and the job's own input. */
  reads: readonly AgentRead[];
  /** The event visibility levels the binding's account sees in the Project. */
  visibilities: ReadonlyArray<'project' | 'owner'>;
}

/**
 * The context document of one run (the user message of its model call): the agent, the trigger (the
 * source event with its summary payload, or a manual run's reason), the job's `input_json`, and only
 * what `grants.reads` allows: `project_events` (the last 20 events the binding's account sees),
 * `transcript` (the last 20 visible messages of the job's session's `main` branch, when the job has a
 * session of this Project), `derived_outputs` (the Project's latest 20, values over 4 KiB shown by
 * size only). Nothing else is read.
 */
export async function buildAgentRunContext(
  db: Executor,
  input: AgentRunContextInput,
): Promise<Record<string, unknown>> {
  const { job, payload, trigger, reads } = input;
  const projectId = job.project_id!;
  const context: Record<string, unknown> = {
    agent: input.agent,
    trigger: {
      type: job.trigger_type ?? 'manual',
      reason: payload.trigger_reason,
      event: trigger ? eventView(trigger) : null,
    },
    input: payload.input_json,
    session_id: payload.session_id,
    floor_id: payload.floor_id,
  };
  if (reads.includes('project_events')) {
    const events = await agentRunsRepository.latestEvents(db, {
      projectId,
      visibilities: input.visibilities,
      limit: AGENT_RUN_READ_LIMIT,
    });
    context.project_events = events.map(eventView);
  }
  if (reads.includes('transcript')) {
    context.transcript = payload.session_id ? await transcriptOf(db, projectId, payload.session_id) : [];
  }
  if (reads.includes('derived_outputs')) {
    const outputs = await derivedOutputsRepository.list(db, { projectId, limit: AGENT_RUN_READ_LIMIT });
    context.derived_outputs = outputs.map((o) => {
      const byteCount = jsonByteCount(o.value);
      return {
        id: o.id,
        domain: o.domain,
        status: o.status,
        source_session_id: o.source_session_id,
        source_floor_id: o.source_floor_id,
        ...(byteCount <= AGENT_RUN_CONTEXT_VALUE_MAX_BYTES
          ? { value: o.value }
          : { value_truncated: true, value_byte_count: byteCount }),
        created_at: o.created_at,
      };
    });
  }
  return context;
}

/** The last visible messages of the session's `main` branch, oldest first; none for a session of another Project. */
async function transcriptOf(db: Executor, projectId: string, sessionId: string) {
  const session = await sessionsRepository.findSession(db, sessionId);
  if (!session || session.project_id !== projectId) return [];
  const branch = await conversationRepository.findBranchByName(db, session.id, MAIN_BRANCH);
  const head = branch?.head_floor_id
    ? await conversationRepository.findFloor(db, branch.head_floor_id)
    : null;
  if (!branch || !head) return [];
  // One message or more per floor: the last 20 floors hold the last 20 messages.
  const history = await readBranchHistory(db, branch, {
    fromFloorNo: Math.max(0, head.floor_no - AGENT_RUN_READ_LIMIT + 1),
  });
  return history.messages
    .filter((m) => !m.is_hidden)
    .slice(-AGENT_RUN_READ_LIMIT)
    .map((m) => ({ floor_no: m.floor_no, role: m.role, content: m.content }));
}

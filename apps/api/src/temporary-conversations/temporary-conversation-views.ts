import type { FloorWithPages, TemporaryInspection } from '@hearth/app';
import type { TemporaryConversationRow } from '@hearth/persistence';
import { toFloorView } from '../conversation/conversation.dto';

/** The branch every temporary conversation runs on, as its routes name it. */
const MAIN = 'main';

/** Spec 2 "Temporary conversation resource". */
export const toTemporaryConversationView = (c: TemporaryConversationRow) => ({
  id: c.session_id,
  workspace_id: c.workspace_id,
  project_id: c.project_id,
  source_session_id: c.source_session_id,
  branch_id: MAIN,
  kind: 'temporary' as const,
  title: c.title,
  purpose: c.purpose,
  status: c.status,
  retention_policy: c.retention_policy,
  visibility: c.visibility,
  created_at: c.created_at,
  updated_at: c.updated_at,
  last_activity_at: c.last_activity_at,
  expires_at: c.expires_at,
  finalized_at: c.finalized_at,
  discarded_at: c.discarded_at,
  cancelled_at: c.cancelled_at,
  cleaned_at: c.cleaned_at,
});

/** A transcript floor (spec 2 "Transcript"), its branch named `main`. */
export const toTemporaryFloorView = (loaded: FloorWithPages) => ({ ...toFloorView(loaded), branch_id: MAIN });

export const toTranscriptView = (conversationId: string, floors: FloorWithPages[]) => ({
  conversation_id: conversationId,
  branch_id: MAIN,
  floors: floors.map(toTemporaryFloorView),
});

/**
 * Spec 2 inspect: the aggregated audit view. A restricted transcript (agent-private, no full-body
 * grant) has message content null with `restricted: true` and `content_length`, floors'
 * reasoning_text null, agent_origin null.
 */
export function toInspectView(inspection: TemporaryInspection) {
  const { conversation: c, transcript_restricted: restricted } = inspection;
  const snapshot = c.source_snapshot as { digest: string | null; source_session_id: string | null };
  return {
    conversation: toTemporaryConversationView(c),
    agent_private: inspection.agent_private,
    transcript_restricted: restricted,
    source_snapshot: {
      digest: snapshot?.digest ?? null,
      source_session_id: snapshot?.source_session_id ?? null,
    },
    agent_origin: restricted ? null : (c.agent_origin ?? null),
    cleanup: {
      cleaned: c.cleaned_at !== null,
      cleaned_at: c.cleaned_at,
      retention_policy: c.retention_policy,
    },
    transcript: {
      branch_id: MAIN,
      floors: inspection.floors.map((loaded) => {
        const floor = toTemporaryFloorView(loaded);
        return {
          ...floor,
          reasoning_text: restricted ? null : floor.reasoning_text,
          pages: floor.pages.map((page) => ({
            ...page,
            messages: page.messages.map((m) => ({
              ...m,
              content: restricted ? null : m.content,
              restricted,
              content_length: m.content.length,
            })),
          })),
        };
      }),
    },
  };
}

import { DomainError, notFound } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import type { ChatTransferJobView } from '@hearth/persistence';
import { importPayloadTooLarge } from '../characters/character-rules';

/** Chat import and export (spec 3 "Exports", "Imports"; docs/decisions.md "Chat import and export"). */

export type ChatFormat = 'nchat' | 'ext_jsonl';
export const CHAT_FORMATS: readonly ChatFormat[] = ['nchat', 'ext_jsonl'];

/** Spec 3's route fallback when `CHAT_IMPORT_MAX_BYTES` is not configured. */
export const CHAT_IMPORT_FALLBACK_MAX_BYTES = 5_000_000;
/** Session titles are 1-200 characters (docs/decisions.md "Sessions and Projects"). */
export const CHAT_TITLE_MAX = 200;
export const DEFAULT_IMPORTED_CHAT_TITLE = 'Imported chat';
/** `export_app_version` of nchat files (package.json `version`). */
export const EXPORT_APP_VERSION = '0.1.0';

export const CHAT_CONTENT_TYPES: Record<ChatFormat, string> = {
  nchat: 'application/json; charset=utf-8',
  ext_jsonl: 'application/x-ndjson; charset=utf-8',
};
export const CHAT_FILE_EXTENSIONS: Record<ChatFormat, string> = { nchat: '.nchat', ext_jsonl: '.jsonl' };

/** What an import answers (spec 3 "Imports": result fields). */
export interface ChatImportResult {
  session_id: string;
  title: string;
  floor_count: number;
  message_count: number;
  /** `ext_jsonl` only. */
  swipe_count?: number;
  skipped_lines: number;
  import_source: ChatFormat;
  format: ChatFormat;
  /** `nchat` only, like the three below. */
  page_count?: number;
  variable_count?: number;
  memory_item_count?: number;
  memory_edge_count?: number;
}

/** The body of `POST /import/chat` and `POST /import/chat/jobs`. */
export interface ChatImportInput {
  data: string;
  character_id?: string | null;
  title?: string | null;
}

export interface ChatExportOptions {
  format: ChatFormat;
  include_variables: boolean;
  include_memories: boolean;
}

/** A file to download. */
export interface ChatFile {
  /** Filename without extension (the session title or the character's name). */
  name: string;
  extension: string;
  content_type: string;
  content: string;
}

/** 413 `import_payload_too_large` when the file text is over the limit (UTF-8 bytes). */
export function checkImportSize(text: string, maxBytes: number): void {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > maxBytes) throw importPayloadTooLarge('The chat file', bytes, maxBytes);
}

export const chatImportCharacterNotFound = () =>
  new DomainError('character_not_found', 400, 'Character not found', { field: 'character_id' });

export const chatTransferJobNotFound = () =>
  notFound('chat_transfer_job_not_found', 'Chat transfer job not found');

export const artifactNotFound = () =>
  notFound('artifact_not_found', 'The job has no file to download (not an export, or not succeeded yet)');

export const artifactExpired = (expiresAt: number) =>
  new DomainError('artifact_expired', 410, 'The export file has expired', { output_expires_at: expiresAt });

export const exportRequiresAsync = (messageCount: number, max: number) =>
  new DomainError(
    'export_requires_async',
    409,
    `The session has ${messageCount} messages; above ${max} use POST /export/chat/:id/jobs`,
    { message_count: messageCount, max_messages: max },
  );

/** A title cut to the session limit; blank becomes the default. */
export function chatTitle(...candidates: Array<string | null | undefined>): string {
  for (const candidate of candidates) {
    if (typeof candidate === 'string' && candidate.trim() !== '')
      return [...candidate].slice(0, CHAT_TITLE_MAX).join('');
  }
  return DEFAULT_IMPORTED_CHAT_TITLE;
}

/** The caller as the worker needs it (stored with the job). */
export function actorSnapshot(actor: Actor): Actor {
  return {
    kind: actor.kind,
    accountId: actor.accountId,
    accountRole: actor.accountRole,
    clientId: actor.clientId,
    clientIsDefault: actor.clientIsDefault,
  };
}

/** `GET /chat-transfer-jobs/:id` (spec 3 "Fields of the chat transfer job object"). */
export interface ChatTransferJobDetail {
  job_id: string;
  status: string;
  job_kind: string;
  format: string | null;
  requested_session_id: string | null;
  output_expires_at: number | null;
  result_session_id: string | null;
  result: unknown;
  error: { code: string | null; message: string } | null;
  attempt_count: number;
  created_at: number;
  updated_at: number;
  finished_at: number | null;
}

export function toJobDetail(job: ChatTransferJobView): ChatTransferJobDetail {
  return {
    job_id: job.id,
    status: job.status,
    job_kind: job.job_kind,
    format: job.format,
    requested_session_id: job.requested_session_id,
    output_expires_at: job.output_expires_at,
    result_session_id: job.result_session_id,
    result: job.result ?? null,
    error: job.last_error ? { code: job.last_error_code, message: job.last_error } : null,
    attempt_count: job.attempt_count,
    created_at: job.created_at,
    updated_at: job.updated_at,
    finished_at: job.finished_at,
  };
}

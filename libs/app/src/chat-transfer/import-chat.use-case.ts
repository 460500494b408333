import { Inject, Injectable } from '@nestjs/common';
import {
  detectChatFormat,
  DomainError,
  isPlainObject,
  parseExtJsonl,
  parseNchat,
  type ParsedExtJsonl,
  type ParsedNchat,
} from '@hearth/domain';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import {
  assetVersionsRepository,
  charactersRepository,
  conversationRepository,
  inTransaction,
  type Db,
  type Executor,
  type Tx,
} from '@hearth/persistence';
import { CONFIG, DB, type AppConfig } from '@hearth/platform';
import { OperationLogWriter } from '../operation-logs/operation-log-writer';
import { MAIN_BRANCH } from '../conversation/session-conversation';
import { createSessionInTransaction } from '../sessions/create-session.use-case';
import { promptRuntimeWriterId } from '../prompt-runtime/prompt-runtime-access';
import {
  nchatExtras,
  writeExtJsonlImport,
  writeImportedAuthorsNote,
  writeNchatImport,
  type NchatExtras,
} from './chat-import-writer';
import {
  chatImportCharacterNotFound,
  chatTitle,
  checkImportSize,
  type ChatImportInput,
  type ChatImportResult,
} from './chat-transfer-rules';

/** A parsed chat file. */
export type ParsedChatFile =
  | { format: 'ext_jsonl'; parsed: ParsedExtJsonl }
  | { format: 'nchat'; parsed: ParsedNchat; extras: NchatExtras };

/** The character a session is bound to: a character and its version (sync policy `pin`). */
export interface ChatImportBinding {
  character_id: string;
  character_version_id: string;
}

/** Detects and parses a chat file (400 `import_parse_error`, `import_empty`, `import_unsupported_version`). */
export function parseChatFile(text: string): ParsedChatFile {
  if (detectChatFormat(text) === 'nchat') {
    return { format: 'nchat', parsed: parseNchat(text), extras: nchatExtras(text) };
  }
  return { format: 'ext_jsonl', parsed: parseExtJsonl(text, { now: Date.now() }) };
}

/**
 * With `character_id`: the latest version of that live character of the caller's account, else 400
 * `character_not_found` (spec 3 "Errors": Import chat). Without: null.
 */
export async function resolveImportBinding(
  db: Executor,
  accountId: string,
  characterId: string | null | undefined,
): Promise<ChatImportBinding | null> {
  if (characterId == null) return null;
  const character = await charactersRepository.findOfAccount(db, accountId, characterId);
  if (!character || character.deleted_at !== null) throw chatImportCharacterNotFound();
  return { character_id: character.id, character_version_id: character.latest_version_id };
}

/**
 * An `nchat` file's own binding, kept only when both ids name a live character of this account and one
 * of its versions (a file from this deployment); ids of another deployment bind nothing.
 */
async function fileBinding(
  db: Executor,
  accountId: string,
  binding: unknown,
): Promise<ChatImportBinding | null> {
  if (!isPlainObject(binding)) return null;
  const { character_id: characterId, character_version_id: versionId } = binding;
  if (typeof characterId !== 'string' || typeof versionId !== 'string') return null;
  const character = await charactersRepository.findOfAccount(db, accountId, characterId);
  if (!character || character.deleted_at !== null) return null;
  const version = await assetVersionsRepository.findOfAccount(db, accountId, versionId, 'character');
  if (!version || version.asset_id !== character.id) return null;
  return { character_id: character.id, character_version_id: version.id };
}

/** Only the default Client may create a session with its own `session_default` Project. */
export function requireSessionDefaultPlacement(actor: Actor): void {
  if (!actor.clientIsDefault) {
    throw new DomainError(
      'project_access_denied',
      403,
      'Only the account’s default Client can import a chat: the imported session gets its own Project',
    );
  }
}

export interface ChatImportDeps {
  access: ProjectAccess;
  operationLogs: OperationLogWriter;
}

/**
 * Builds the session of an imported chat inside the caller's transaction: a new session (its own
 * `session_default` Project, no greeting) bound to `binding` (pinned), then every floor, page, message,
 * variable and memory of the file (and, from an `ext_jsonl` header, the author's note settings); logs `create_session` and `import_chat` (counts only).
 */
export async function importChatInTransaction(
  tx: Tx,
  actor: Actor,
  file: ParsedChatFile,
  options: { binding: ChatImportBinding | null; title?: string | null; async: boolean },
  deps: ChatImportDeps,
): Promise<ChatImportResult> {
  const nchat = file.format === 'nchat' ? file.parsed.chat.data : null;
  const binding =
    options.binding ?? (nchat ? await fileBinding(tx, actor.accountId, nchat.character_binding) : null);
  const title =
    file.format === 'nchat'
      ? chatTitle(options.title, file.parsed.chat.data.title)
      : chatTitle(options.title, firstCharacterName(file.parsed));
  const session = await createSessionInTransaction(
    tx,
    actor,
    {
      title,
      character_id: binding?.character_id ?? null,
      character_version_id: binding?.character_version_id ?? null,
      greeting: false,
    },
    deps,
  );
  const main = await conversationRepository.findBranchByName(tx, session.id, MAIN_BRANCH);
  if (!main) throw new Error(`session ${session.id} has no main branch`);

  let result: ChatImportResult;
  if (file.format === 'nchat') {
    await writeNchatImport(tx, session, main, file.parsed, file.extras);
    const counts = file.parsed.counts;
    result = {
      session_id: session.id,
      title: session.title,
      floor_count: counts.floor_count,
      message_count: counts.message_count,
      skipped_lines: 0,
      import_source: 'nchat',
      format: 'nchat',
      page_count: counts.page_count,
      variable_count: counts.variable_count,
      memory_item_count: counts.memory_item_count,
      memory_edge_count: counts.memory_edge_count,
    };
  } else {
    await writeExtJsonlImport(tx, session, main, file.parsed);
    await writeImportedAuthorsNote(tx, session, file.parsed, promptRuntimeWriterId(actor));
    const counts = file.parsed.counts;
    result = {
      session_id: session.id,
      title: session.title,
      floor_count: counts.floor_count,
      message_count: counts.message_count,
      swipe_count: counts.swipe_count,
      skipped_lines: counts.skipped_lines,
      import_source: 'ext_jsonl',
      format: 'ext_jsonl',
    };
  }
  const { session_id: _id, title: _title, import_source: _source, ...counts } = result;
  await deps.operationLogs.write(tx, actor, {
    action: 'import_chat',
    account_id: session.account_id,
    workspace_id: session.workspace_id,
    project_id: session.project_id,
    session_id: session.id,
    branch_id: main.id,
    target_type: 'session',
    target_id: session.id,
    source_type: options.async ? 'job' : undefined,
    metadata: {
      ...counts,
      character_id: binding?.character_id ?? null,
      character_version_id: binding?.character_version_id ?? null,
      async: options.async,
    },
  });
  return result;
}

/** The speaker of the first character line, for the default title. */
function firstCharacterName(parsed: ParsedExtJsonl): string | null {
  for (const floor of parsed.floors) {
    for (const page of floor.pages) {
      const message = page.messages.find((m) => m.role === 'assistant' && m.name && m.name.trim() !== '');
      if (message?.name) return message.name;
    }
  }
  return null;
}

/**
 * `POST /import/chat`: size limit (413 `import_payload_too_large` above `CHAT_IMPORT_MAX_BYTES`), character
 * binding, parsing, then the whole session in ONE transaction: a failure leaves nothing.
 */
@Injectable()
export class ImportChatUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
    private readonly access: ProjectAccess,
    private readonly operationLogs: OperationLogWriter,
  ) {}

  async execute(actor: Actor, input: ChatImportInput): Promise<ChatImportResult> {
    checkImportSize(input.data, this.config.chatImportMaxBytes);
    const binding = await resolveImportBinding(this.db, actor.accountId, input.character_id);
    requireSessionDefaultPlacement(actor);
    const file = parseChatFile(input.data);
    return inTransaction(this.db, ({ tx }) =>
      importChatInTransaction(
        tx,
        actor,
        file,
        { binding, title: input.title, async: false },
        { access: this.access, operationLogs: this.operationLogs },
      ),
    );
  }
}

import { Inject, Injectable } from '@nestjs/common';
import type { MacroDiagnostics, MacroEngineKind } from '@hearth/domain/prompt/macros';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import { promptRuntimeRepository, type Db } from '@hearth/persistence';
import { CONFIG, DB, type AppConfig } from '@hearth/platform';
import { loadTurnContext } from '../turns/turn-context';
import type { TurnContextWarning } from '../turns/turn-context.types';
import { requireBranchLocalSnapshot } from '../variables/variable-views';
import { previewMacros } from './macro-preview';

export interface MacroPreviewInput {
  text: string;
  /** What `{{input}}` reads (the message the next turn would send); default empty. */
  message?: string | null;
  branch_id?: string | null;
  source_floor_id?: string | null;
  macro_engine?: MacroEngineKind;
}

/** `{data}` of `POST /sessions/:id/prompt-runtime/preview`. */
export interface MacroPreview {
  input_text: string;
  expanded_text: string;
  macro_engine: MacroEngineKind;
  /** Spec 2: macro diagnostics live only in `runtime_trace.macro`; variable writes are staged, never applied. */
  runtime_trace: { macro: MacroDiagnostics };
  warnings: TurnContextWarning[];
}

/**
 * `POST /sessions/:id/prompt-runtime/preview`: one text expanded with the session's context at the branch
 * head (or `source_floor_id`): persona, character, history, variables, the turn's seed and clock. No
 * floor, no model call, no write. Any member of the session's Project. On a branch without floors of
 * its own, `source_floor_id` with `branch_id` reads that floor's stored local view (409
 * `branch_local_snapshot_missing` without one).
 */
@Injectable()
export class PreviewPromptMacrosUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
    private readonly access: ProjectAccess,
  ) {}

  async execute(actor: Actor, sessionId: string, input: MacroPreviewInput): Promise<MacroPreview> {
    const ctx = await loadTurnContext(
      this.db,
      actor,
      {
        sessionId,
        branchId: input.branch_id ?? null,
        sourceFloorId: input.source_floor_id ?? null,
        intent: 'normal',
        userInput: input.message ?? null,
        access: 'read',
        sessionNotFoundCode: 'session_not_found',
      },
      { access: this.access, config: this.config },
    );
    // Spec 2 "Macro compatibility": on a branch not materialised yet (no floor of its own), named with
    // both branch_id and source_floor_id, the local view is the source floor's exact stored snapshot;
    // a floor without one (an imported floor) is 409 `branch_local_snapshot_missing`.
    let engineInput = ctx.engineInput;
    if (
      input.branch_id &&
      input.source_floor_id &&
      !(await promptRuntimeRepository.isBranchMaterialised(this.db, ctx.branch.id))
    ) {
      const local = await requireBranchLocalSnapshot(this.db, ctx.session.account_id, input.source_floor_id);
      engineInput = { ...engineInput, variables: { ...engineInput.variables, local } };
    }
    const preview = previewMacros(engineInput, input.text, input.macro_engine);
    return {
      input_text: input.text,
      expanded_text: preview.text,
      macro_engine: preview.macro_engine,
      runtime_trace: { macro: preview.macro },
      warnings: ctx.warnings,
    };
  }
}

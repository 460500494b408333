import { Inject, Injectable } from '@nestjs/common';
import { buildPrompt, type PromptEngineInput } from '@hearth/domain/prompt/engine';
import { VISIBILITY_OF } from '@hearth/domain/prompt/injections';
import { ProjectAccess, roleAllows, type Actor } from '@hearth/permissions';
import type { Db } from '@hearth/persistence';
import { CONFIG, DB, type AppConfig } from '@hearth/platform';
import { toDryRunResult, type DryRunResult } from '../turns/dry-run-result';
import { budgetParamsOf, requestOverrideOf, type DryRunInput } from '../turns/dry-run.use-case';
import { loadTurnContext } from '../turns/turn-context';
import type { TurnContext } from '../turns/turn-context.types';

export interface InspectInput extends Partial<DryRunInput> {
  include_restricted_injection_content?: boolean;
}

/** One injection the turn would consider, as stored or sent (restricted sources trimmed unless allowed). */
export interface InspectedInjection {
  id: string | null;
  scope: string;
  source_kind: string;
  visibility: string;
  restricted: boolean;
  title: string | null;
  content: string | null;
  content_length: number;
  placement: string;
  placement_params: unknown;
  order: number;
  enabled: boolean;
  mode_scope: string | null;
  expires_at: number | null;
}

/** `{data}` of `POST /sessions/:id/prompt-runtime/inspect`: the dry-run result plus what went in. */
export interface PromptInspection extends DryRunResult {
  /** True only for an owner who sent `include_restricted_injection_content: true`. */
  restricted_content_included: boolean;
  engine_input: ReturnType<typeof summariseEngineInput>;
  injections: InspectedInjection[];
}

const countBy = <T>(items: readonly T[], key: (v: T) => string) =>
  items.reduce<Record<string, number>>((acc, v) => ({ ...acc, [key(v)]: (acc[key(v)] ?? 0) + 1 }), {});

/** What the engine was given, without bodies (those are the library's and the transcript's). */
export function summariseEngineInput(ctx: TurnContext) {
  const input: PromptEngineInput = ctx.engineInput;
  const card = input.character?.data ?? null;
  const history = input.history;
  return {
    seed: input.seed,
    now: input.now,
    intent: input.intent ?? 'normal',
    prompt_mode: input.prompt_mode ?? 'compat_strict',
    macro_engine: input.macro_engine ?? 'v2',
    branch_id: ctx.branch.id,
    parent_floor_id: ctx.parentFloor?.id ?? null,
    next_floor_no: ctx.nextFloorNo,
    user: {
      name: input.user.name,
      description_length: input.user.description?.length ?? 0,
      position: input.user.position ?? 'in_prompt',
      depth: input.user.depth ?? null,
      role: input.user.role ?? null,
    },
    authors_note: input.authors_note
      ? {
          prompt_length: input.authors_note.prompt.length,
          interval: input.authors_note.interval,
          depth: input.authors_note.depth,
          position: input.authors_note.position,
          role: input.authors_note.role,
        }
      : null,
    character: input.character
      ? {
          id: input.character.id ?? null,
          version_id: input.character.version_id ?? null,
          name: typeof card?.name === 'string' ? card.name : null,
        }
      : null,
    preset: input.preset
      ? {
          id: input.preset.id ?? null,
          version: input.preset.version ?? null,
          updated_at: input.preset.updated_at ?? null,
        }
      : null,
    lorebooks: input.lorebooks.map((b) => ({
      id: b.id,
      name: b.name,
      source: b.source,
      version: b.version ?? null,
      updated_at: b.updated_at ?? null,
      entry_count: b.entries.length,
    })),
    regex: input.regex
      ? {
          profile_id: input.regex.profile_id ?? null,
          version: input.regex.version ?? null,
          script_counts: countBy(input.regex.scripts, (s) => s.scope ?? 'unscoped'),
        }
      : null,
    history: {
      message_count: history.length,
      first_floor_no: history[0]?.floor_no ?? null,
      last_floor_no: history.at(-1)?.floor_no ?? null,
      hidden_count: history.filter((m) => m.is_hidden).length,
      narrator_count: history.filter((m) => m.is_narrator).length,
      stored_token_counts: history.filter((m) => m.token_count !== null && m.token_count !== undefined)
        .length,
    },
    user_input_length: input.user_input?.length ?? null,
    policy_layers: (input.policy_layers ?? []).map((l) => ({ source: l.source, value: l.value })),
    variables: {
      local_keys: Object.keys(input.variables?.local ?? {}).length,
      global_keys: Object.keys(input.variables?.global ?? {}).length,
    },
    timed_state: {
      sticky: Object.keys(input.timed_state?.sticky ?? {}).length,
      cooldown: Object.keys(input.timed_state?.cooldown ?? {}).length,
    },
    provider: input.provider,
    token_encoding: input.token_encoding ?? null,
  };
}

/**
 * `POST /sessions/:id/prompt-runtime/inspect`: the dry-run of the body (same fields, `message` optional)
 * with the injections that went in and a summary of the engine input. Any member may inspect; restricted
 * injection sources (`agent_private`, `debug`, `system`) keep their title, content and source chain only
 * for an owner (`project.session.write`) who sends `include_restricted_injection_content: true` (spec 2);
 * everyone else gets them trimmed. No write, no model call.
 */
@Injectable()
export class InspectPromptUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
    private readonly access: ProjectAccess,
  ) {}

  async execute(actor: Actor, sessionId: string, input: InspectInput): Promise<PromptInspection> {
    const intent = input.prompt_intent ?? 'normal';
    const policyOverride = requestOverrideOf(input);
    const includeMatches = input.debug_options?.include_worldbook_matches === true;
    const ctx = await loadTurnContext(
      this.db,
      actor,
      {
        sessionId,
        branchId: input.branch_id ?? null,
        sourceFloorId: input.source_floor_id ?? null,
        intent,
        userInput: ['continue', 'regenerate', 'swipe'].includes(intent) ? null : (input.message ?? null),
        requestInjections: input.prompt_runtime_injections ?? null,
        debug: { include_worldbook_matches: includeMatches },
        generationParams: budgetParamsOf(input),
        policyOverride,
        access: 'read',
        sessionNotFoundCode: 'session_not_found',
      },
      { access: this.access, config: this.config },
    );
    const full =
      input.include_restricted_injection_content === true && roleAllows(ctx.role, 'project.session.write');
    const result = buildPrompt(ctx.engineInput);
    const view = toDryRunResult(result, {
      includeWorldbookMatches: includeMatches,
      includeRestricted: full,
      warnings: ctx.warnings,
    });
    if (full) {
      // The engine trims restricted items itself; an owner's full view takes title and chain back from the input.
      const items = view.runtime_trace.injection.items.map((item) => {
        const source = ctx.engineInput.injections?.[item.request_index];
        return item.restricted && source
          ? { ...item, title: source.title, source_chain: source.source_chain ?? null }
          : item;
      });
      view.runtime_trace = { ...view.runtime_trace, injection: { ...view.runtime_trace.injection, items } };
    }
    return {
      ...view,
      restricted_content_included: full,
      engine_input: summariseEngineInput(ctx),
      injections: (ctx.engineInput.injections ?? []).map((item) => {
        const visibility = VISIBILITY_OF[item.source_kind] ?? 'system';
        const restricted = visibility !== 'client';
        const shown = !restricted || full;
        return {
          id: item.id ?? null,
          scope: item.scope,
          source_kind: item.source_kind,
          visibility,
          restricted,
          title: shown ? item.title : null,
          content: shown ? item.content : null,
          content_length: item.content.length,
          placement: item.placement,
          placement_params: item.placement_params ?? null,
          order: item.order ?? 100,
          enabled: item.enabled !== false,
          mode_scope: item.mode_scope ?? null,
          expires_at: item.expires_at ?? null,
        };
      }),
    };
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { validationError } from '@hearth/domain';
import type { GenerationType } from '@hearth/domain/prompt/assembly/chat-completion';
import { buildPrompt } from '@hearth/domain/prompt/engine';
import { policyPatchProblems } from '@hearth/domain/prompt/policy';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import type { Db } from '@hearth/persistence';
import { CONFIG, DB, type AppConfig } from '@hearth/platform';
import { toDryRunResult, type DryRunResult } from './dry-run-result';
import { loadTurnContext } from './turn-context';
import type { RequestInjectionInput } from './turn-context.types';

export interface DryRunInput {
  message: string;
  prompt_intent?: GenerationType;
  branch_id?: string | null;
  source_floor_id?: string | null;
  prompt_runtime_injections?: RequestInjectionInput[] | null;
  debug_options?: { include_worldbook_matches?: boolean } | null;
  budget?: unknown;
  source_selection?: unknown;
  /** As for respond: the two token bounds shape the prompt budget; the rest only matters to a model call. */
  generation_params?: { max_output_tokens?: number | null; max_context_tokens?: number | null } | null;
}

/**
 * The two token bounds of a body's `generation_params` that shape the prompt budget, as respond passes
 * them (the other params only matter to a model call). Dry-run and inspect read them here.
 */
export const budgetParamsOf = (input: Pick<DryRunInput, 'generation_params'>) => ({
  max_output_tokens: input.generation_params?.max_output_tokens ?? null,
  max_context_tokens: input.generation_params?.max_context_tokens ?? null,
});

/** Intents without a new user message: the message is ignored (ST sends none for them). */
const NO_INPUT_INTENTS: ReadonlySet<GenerationType> = new Set(['continue', 'regenerate', 'swipe']);

/**
 * `budget` and `source_selection` of a dry-run body as the `request_override` policy layer, checked with
 * the policy's own leaf rules (400 `validation_error` naming the dotted path).
 */
export function requestOverrideOf(input: {
  budget?: unknown;
  source_selection?: unknown;
}): Record<string, unknown> | null {
  const sections: Record<string, unknown> = {};
  if (input.budget !== undefined && input.budget !== null) sections.budget = input.budget;
  if (input.source_selection !== undefined && input.source_selection !== null)
    sections.source_selection = input.source_selection;
  if (Object.keys(sections).length === 0) return null;
  const problems = policyPatchProblems(sections);
  if (problems.length > 0)
    throw validationError(problems.map((p) => `${p.field}: ${p.problems.join(', ')}`).join('; '), {
      fields: problems,
    });
  return sections;
}

/**
 * `POST /sessions/:id/respond/dry-run` (spec 2): the prompt the next turn would send, with its
 * explanation; no model call and no write of any kind (not even the lazy `main` branch). Any member of
 * the session's Project may dry-run (`project.read`); see docs/decisions.md "Turn context and dry-run".
 */
@Injectable()
export class DryRunUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
    private readonly access: ProjectAccess,
  ) {}

  async execute(actor: Actor, sessionId: string, input: DryRunInput): Promise<DryRunResult> {
    const intent = input.prompt_intent ?? 'normal';
    if (intent === 'normal' && !input.message.trim())
      throw validationError('message must not be empty', {
        fields: [{ field: 'message', problems: ['message must not be empty'] }],
      });
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
        userInput: NO_INPUT_INTENTS.has(intent) ? null : input.message,
        requestInjections: input.prompt_runtime_injections ?? null,
        debug: { include_worldbook_matches: includeMatches },
        generationParams: budgetParamsOf(input),
        policyOverride,
        access: 'read',
      },
      { access: this.access, config: this.config },
    );
    const result = buildPrompt(ctx.engineInput);
    return toDryRunResult(result, { includeWorldbookMatches: includeMatches, warnings: ctx.warnings });
  }
}

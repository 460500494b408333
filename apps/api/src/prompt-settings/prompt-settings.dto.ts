import { ApiPropertyOptional } from '@nestjs/swagger';
import { Allow, IsInt, IsOptional, Max, Min } from 'class-validator';

const RESET = 'null resets it to the default; absent keeps it';

/**
 * `PUT /sessions/:id/prompt-runtime/mode`: values are judged by the prompt settings rules (400
 * `validation_error` naming the path); unknown top-level fields are rejected by the pipe.
 */
export class PutPromptSettingsDto {
  @ApiPropertyOptional({
    enum: ['compat_strict', 'compat_plus', 'native'],
    nullable: true,
    description: RESET,
  })
  @Allow()
  prompt_mode?: unknown;

  @ApiPropertyOptional({ enum: ['classic', 'v2'], nullable: true, description: RESET })
  @Allow()
  macro_engine?: unknown;

  @ApiPropertyOptional({
    enum: ['none', 'merge', 'merge_tools', 'semi', 'semi_tools', 'strict', 'strict_tools', 'single'],
    nullable: true,
    description: `SillyTavern's prompt post-processing; ${RESET}`,
  })
  @Allow()
  post_processing?: unknown;

  @ApiPropertyOptional({ type: String, nullable: true, description: `IANA time zone; ${RESET}` })
  @Allow()
  timezone?: unknown;

  @ApiPropertyOptional({
    enum: ['in_prompt', 'top_an', 'bottom_an', 'at_depth', 'none'],
    nullable: true,
    description: `where the persona description goes (SillyTavern's persona position; the session wins over the user card's); ${RESET}`,
  })
  @Allow()
  persona_position?: unknown;

  @ApiPropertyOptional({
    type: Number,
    minimum: 0,
    maximum: 10000,
    nullable: true,
    description: `in-chat depth of the persona description with at_depth; ${RESET}`,
  })
  @Allow()
  persona_depth?: unknown;

  @ApiPropertyOptional({
    enum: ['system', 'user', 'assistant'],
    nullable: true,
    description: `role of the persona description with at_depth; ${RESET}`,
  })
  @Allow()
  persona_role?: unknown;

  @ApiPropertyOptional({
    type: Object,
    nullable: true,
    description:
      'lorebook scan settings (scanDepth, minActivations, minActivationsDepthMax, budgetPercent, budgetCap, ' +
      'includeNames, recursive, maxRecursionSteps, caseSensitive, matchWholeWords, useGroupScoring, ' +
      'characterStrategy): merged key by key, a null key resets it, null resets all',
  })
  @Allow()
  lorebook?: unknown;

  @ApiPropertyOptional({
    type: Object,
    nullable: true,
    description:
      "the chat's author's note (SillyTavern chat_metadata note_*): prompt (string, at most 100,000 " +
      'characters), interval (0-9999; 1 = every message, 0 = never), depth (0-10000), position ' +
      '(after_scenario, in_chat, before_prompt), role (system, user, assistant): merged key by key, a null ' +
      'key resets it, null resets all',
  })
  @Allow()
  authors_note?: unknown;

  @ApiPropertyOptional({
    type: Number,
    minimum: 0,
    description: 'write only if the settings are at this version (0: never written), else 409',
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(2_147_483_647)
  expected_version?: number;
}

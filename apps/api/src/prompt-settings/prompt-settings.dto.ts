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

  @ApiPropertyOptional({ enum: ['in_prompt', 'none'], nullable: true, description: RESET })
  @Allow()
  persona_position?: unknown;

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

import { ApiPropertyOptional, ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  Allow,
  IsArray,
  IsBoolean,
  IsIn,
  IsObject,
  IsOptional,
  IsString,
  Length,
  MaxLength,
  ValidateNested,
} from 'class-validator';
import { GenerationParamsDto } from './turns.dto';

/** The longest dry-run message (the same bound as spec 2's `dynamic_context`). */
export const DRY_RUN_MESSAGE_MAX = 200_000;
const ID_MAX = 200;
export const PROMPT_INTENTS = ['normal', 'continue', 'impersonate', 'swipe', 'regenerate', 'quiet'] as const;

/** `debug_options` (spec 2); dry-run always returns the snapshot and the trace. */
export class DebugOptionsDto {
  @IsOptional()
  @IsBoolean()
  include_prompt_snapshot?: boolean;

  @IsOptional()
  @IsBoolean()
  include_runtime_trace?: boolean;

  @ApiPropertyOptional({ default: false, description: 'expands assembly.worldbook_matches' })
  @IsOptional()
  @IsBoolean()
  include_worldbook_matches?: boolean;
}

/**
 * `POST /sessions/:id/respond/dry-run` (spec 2 "Dry-run request", plus `branch_id`, `source_floor_id`,
 * `generation_params` and `config` of the respond body: spec 2 names only `session_state_writes` as a
 * respond field dry-run does not accept). Injection items and the two policy sections are judged by the use case (400
 * `invalid_injection_payload` / `validation_error` naming the path).
 */
export class DryRunDto {
  @ApiProperty({ maxLength: DRY_RUN_MESSAGE_MAX })
  @IsString()
  @MaxLength(DRY_RUN_MESSAGE_MAX)
  message!: string;

  @ApiPropertyOptional({ enum: PROMPT_INTENTS, default: 'normal' })
  @IsOptional()
  @IsIn(PROMPT_INTENTS)
  prompt_intent?: (typeof PROMPT_INTENTS)[number];

  @IsOptional()
  @IsString()
  @Length(1, ID_MAX)
  branch_id?: string;

  @IsOptional()
  @IsString()
  @Length(1, ID_MAX)
  source_floor_id?: string;

  @ApiPropertyOptional({ type: [Object], description: 'request-level injections, at most 32' })
  @IsOptional()
  @IsArray()
  @Allow()
  prompt_runtime_injections?: Array<Record<string, unknown>>;

  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => DebugOptionsDto)
  debug_options?: DebugOptionsDto;

  @ApiPropertyOptional({
    type: GenerationParamsDto,
    description: 'as for respond; max_output_tokens and max_context_tokens shape the prompt budget',
  })
  @IsOptional()
  @ValidateNested()
  @Type(() => GenerationParamsDto)
  generation_params?: GenerationParamsDto;

  @ApiPropertyOptional({
    type: Object,
    description: 'Turn config override, as for respond (no fields are used yet)',
  })
  @IsOptional()
  @IsObject()
  config?: Record<string, unknown>;

  @ApiPropertyOptional({ type: Object, description: '{max_input_tokens?, reserved_completion_tokens?}' })
  @Allow()
  budget?: unknown;

  @ApiPropertyOptional({ type: Object, description: '{history?, memory?, worldbook?, examples?}' })
  @Allow()
  source_selection?: unknown;
}

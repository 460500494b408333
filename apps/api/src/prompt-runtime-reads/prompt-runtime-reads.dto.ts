import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsOptional, IsString, Length, MaxLength } from 'class-validator';
import { DryRunDto } from '../turns/dry-run.dto';

const ID_MAX = 200;
/** The longest preview text (the same bound as spec 2's `dynamic_context`). */
export const PREVIEW_TEXT_MAX = 200_000;

/** `POST /sessions/:id/prompt-runtime/compare`. */
export class ComparePromptsDto {
  @ApiProperty({ description: 'a committed floor of the session' })
  @IsString()
  @Length(1, ID_MAX)
  base_floor_id!: string;

  @ApiProperty({ description: 'a committed floor of the session' })
  @IsString()
  @Length(1, ID_MAX)
  target_floor_id!: string;
}

/** `POST /sessions/:id/prompt-runtime/preview`. */
export class PreviewMacrosDto {
  @ApiProperty({ minLength: 1, maxLength: PREVIEW_TEXT_MAX })
  @IsString()
  @Length(1, PREVIEW_TEXT_MAX)
  text!: string;

  @ApiPropertyOptional({ description: 'what {{input}} reads' })
  @IsOptional()
  @IsString()
  @MaxLength(PREVIEW_TEXT_MAX)
  message?: string;

  @IsOptional()
  @IsString()
  @Length(1, ID_MAX)
  branch_id?: string;

  @IsOptional()
  @IsString()
  @Length(1, ID_MAX)
  source_floor_id?: string;

  @ApiPropertyOptional({ enum: ['v2', 'classic'], default: 'v2' })
  @IsOptional()
  @IsIn(['v2', 'classic'])
  macro_engine?: 'v2' | 'classic';
}

/** `POST /sessions/:id/prompt-runtime/inspect`: the dry-run body (`message` optional) plus the owner flag. */
export class InspectPromptDto extends DryRunDto {
  @ApiPropertyOptional({ maxLength: 200_000, description: 'the next user message (optional here)' })
  @IsOptional()
  declare message: string;

  @ApiPropertyOptional({ default: false, description: 'owners only: restricted injection titles and bodies' })
  @IsOptional()
  @IsBoolean()
  include_restricted_injection_content?: boolean;
}

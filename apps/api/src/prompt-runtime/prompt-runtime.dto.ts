import { ApiPropertyOptional } from '@nestjs/swagger';
import { Allow, IsInt, IsOptional, Max, Min } from 'class-validator';
import type { PromptInjectionRow } from '@hearth/persistence';

const SECTION_DOC = {
  description: 'object: deep-merged into the stored value; null: clears the section',
  nullable: true,
};

/**
 * `PATCH .../prompt-runtime/policy`: the five sections are judged by the policy rules (unknown keys or
 * bad values: 400 `validation_error` naming the path); other top-level fields are rejected by the pipe.
 */
export class UpdatePromptPolicyDto {
  @ApiPropertyOptional({ type: Object, ...SECTION_DOC })
  @Allow()
  structure?: unknown;

  @ApiPropertyOptional({ type: Object, ...SECTION_DOC })
  @Allow()
  delivery?: unknown;

  @ApiPropertyOptional({ type: Object, ...SECTION_DOC })
  @Allow()
  budget?: unknown;

  @ApiPropertyOptional({ type: Object, ...SECTION_DOC })
  @Allow()
  source_selection?: unknown;

  @ApiPropertyOptional({ type: Object, ...SECTION_DOC })
  @Allow()
  visibility?: unknown;

  @ApiPropertyOptional({
    type: Number,
    minimum: 0,
    description: 'write only if the envelope is at this version (0: never written), else 409 policy_conflict',
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(2_147_483_647)
  expected_version?: number;
}

/**
 * The known fields of an injection body; their values are judged by the injection rules, unknown
 * fields by the pipe: both 400 `invalid_injection_payload`, the one code spec 2 names for these routes.
 */
export class CreatePromptInjectionDto {
  static readonly validationErrorCode = 'invalid_injection_payload';

  @ApiPropertyOptional({ enum: ['client_injection'], description: 'required' })
  @Allow()
  source_kind?: unknown;

  @ApiPropertyOptional({ type: String, minLength: 1, maxLength: 256, description: 'required' })
  @Allow()
  title?: unknown;

  @ApiPropertyOptional({ type: String, minLength: 1, maxLength: 8000, description: 'required' })
  @Allow()
  content?: unknown;

  @ApiPropertyOptional({ type: String, description: 'required; a common or advanced placement of spec 2' })
  @Allow()
  placement?: unknown;

  @ApiPropertyOptional({
    type: Object,
    nullable: true,
    description: '{floor_no?, offset?, depth?}: non-negative integers',
  })
  @Allow()
  placement_params?: unknown;

  @ApiPropertyOptional({ type: Number, default: 100 })
  @Allow()
  order?: unknown;

  @ApiPropertyOptional({ type: Boolean, default: true })
  @Allow()
  enabled?: unknown;

  @ApiPropertyOptional({ enum: ['compat_strict', 'compat_plus', 'native'], nullable: true })
  @Allow()
  mode_scope?: unknown;

  @ApiPropertyOptional({ type: Number, nullable: true, description: 'ms; expires_at = created_at + ttl_ms' })
  @Allow()
  ttl_ms?: unknown;
}

/** `PATCH .../injections/:injectionId`: the same fields, at least one mutable one. */
export class UpdatePromptInjectionDto extends CreatePromptInjectionDto {}

/** Spec 2's persistent injection record, plus where it lives and when it expires. */
export const toPromptInjectionView = (row: PromptInjectionRow) => ({
  id: row.id,
  session_id: row.session_id,
  branch_id: row.branch_id,
  scope: row.scope,
  source_kind: row.source_kind,
  title: row.title,
  content: row.content,
  placement: row.placement,
  placement_params: row.placement_params,
  order: row.order,
  enabled: row.enabled,
  mode_scope: row.mode_scope,
  ttl_ms: row.ttl_ms,
  expires_at: row.expires_at,
  created_by: row.created_by,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

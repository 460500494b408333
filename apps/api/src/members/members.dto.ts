import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Length } from 'class-validator';
import type { ProjectMemberRow } from '@hearth/persistence';

/**
 * `POST /projects/:id/members`: `role` (observer or deriver) and either `account_id` or `subject_type`
 * with `subject_id`. Values are checked by the member rules so each gets its spec error code.
 */
export class AddMemberDto {
  @ApiProperty({ type: String, enum: ['observer', 'deriver'] })
  @IsString()
  role!: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: 'Legacy form: the account to add (equals subject_type account)',
  })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  account_id?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, enum: ['account', 'client'] })
  @IsOptional()
  @IsString()
  subject_type?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  subject_id?: string | null;
}

/** Spec 1 "Project Member". */
export interface MemberView {
  id: string;
  workspace_id: string;
  project_id: string;
  account_id: string;
  role: 'owner' | 'observer' | 'deriver';
  status: 'active' | 'removed';
  subject_type: 'account' | 'client';
  subject_id: string;
  client_id: string | null;
  created_by_account_id: string | null;
  created_by_client_id: string | null;
  created_at: number;
  updated_at: number;
}

export const toMemberView = (m: ProjectMemberRow): MemberView => ({
  id: m.id,
  workspace_id: m.workspace_id,
  project_id: m.project_id,
  account_id: m.account_id,
  role: m.role,
  status: m.status,
  subject_type: m.subject_type,
  subject_id: m.subject_id,
  client_id: m.client_id,
  created_by_account_id: m.created_by_account_id,
  created_by_client_id: m.created_by_client_id,
  created_at: m.created_at,
  updated_at: m.updated_at,
});

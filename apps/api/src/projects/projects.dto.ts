import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from '@hearth/domain';
import type { ProjectRole } from '@hearth/permissions';
import type { ProjectRow, SessionRow } from '@hearth/persistence';

const ROLES = ['owner', 'observer', 'deriver'] as const;
const STATUSES = ['active', 'archived'] as const;

/** `GET /projects` (spec 1 "Projects"). */
export class ListProjectsQueryDto {
  @IsOptional()
  @IsIn(ROLES)
  role?: ProjectRole;

  /** Default `active`. */
  @IsOptional()
  @IsIn(STATUSES)
  status: 'active' | 'archived' = 'active';

  /** Default 50, max 200. */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_LIMIT)
  limit: number = DEFAULT_PAGE_LIMIT;

  /** The previous page's `next_cursor`; anything else answers 400 `invalid_cursor`. */
  @IsOptional()
  @IsString()
  cursor?: string;
}

/** `GET /projects/:id/sessions`: no status means every status. */
export class ListProjectSessionsQueryDto {
  @IsOptional()
  @IsIn(STATUSES)
  status?: 'active' | 'archived';

  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_LIMIT)
  limit: number = DEFAULT_PAGE_LIMIT;

  @IsOptional()
  @IsString()
  cursor?: string;
}

/** The Project object of spec 1, with the caller's role. */
export interface ProjectView {
  id: string;
  workspace_id: string;
  account_id: string;
  name: string;
  description: string | null;
  kind: 'session_default' | 'manual';
  status: 'active' | 'archived';
  role: ProjectRole;
  settings_override: unknown;
  created_at: number;
  updated_at: number;
}

/** The stored override, parsed; `{}` when the Project has none. */
function parseOverride(value: unknown): unknown {
  if (value === null || value === undefined) return {};
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

export const toProjectView = (p: ProjectRow, role: ProjectRole): ProjectView => ({
  id: p.id,
  workspace_id: p.workspace_id,
  account_id: p.account_id,
  name: p.name,
  description: p.description,
  kind: p.kind,
  status: p.status,
  role,
  settings_override: parseOverride(p.settings_override),
  created_at: p.created_at,
  updated_at: p.updated_at,
});

/** Spec 1 "Session summary": unlike the session object, it carries workspace_id and project_id. */
export const toSessionSummary = (s: SessionRow) => ({
  id: s.id,
  workspace_id: s.workspace_id,
  project_id: s.project_id,
  title: s.title,
  status: s.status,
  created_at: s.created_at,
  updated_at: s.updated_at,
});

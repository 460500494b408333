import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  Min,
  ValidateIf,
} from 'class-validator';
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from '@hearth/domain';
import type { SessionScope } from '@hearth/app';
import type { SessionRow } from '@hearth/persistence';

const NOT_BLANK = /\S/;
export const SESSION_TITLE_MAX = 200;
export const BINDING_ID_MAX = 200;
export const WORLDBOOK_IDS_MAX = 100;
const SESSION_STATUSES = ['active', 'archived'] as const;

/**
 * `POST /sessions` (CONTRACT.md "Sessions"): every field optional. Binding ids are stored as given;
 * the library (issue 3) validates them. `null` counts as absent.
 */
export class CreateSessionDto {
  /** 1-200 characters, not blank; default `New session`. */
  @IsOptional()
  @IsString()
  @Length(1, SESSION_TITLE_MAX)
  @Matches(NOT_BLANK, { message: 'title must not be blank' })
  title?: string;

  /** Place the session in this Project (the caller must be able to write sessions there). */
  @IsOptional()
  @IsString()
  @Length(1, BINDING_ID_MAX)
  project_id?: string;

  @IsOptional()
  @IsString()
  @Length(1, BINDING_ID_MAX)
  character_id?: string;

  @IsOptional()
  @IsString()
  @Length(1, BINDING_ID_MAX)
  character_version_id?: string;

  @IsOptional()
  @IsString()
  @Length(1, BINDING_ID_MAX)
  user_card_id?: string;

  @IsOptional()
  @IsString()
  @Length(1, BINDING_ID_MAX)
  preset_id?: string;

  /** Up to 100 distinct ids (null is not a list: 400). */
  @ValidateIf((o: { worldbook_ids?: unknown }) => o.worldbook_ids !== undefined)
  @IsArray()
  @ArrayMaxSize(WORLDBOOK_IDS_MAX)
  @ArrayUnique()
  @IsString({ each: true })
  @Length(1, BINDING_ID_MAX, { each: true })
  worldbook_ids?: string[];

  @IsOptional()
  @IsString()
  @Length(1, BINDING_ID_MAX)
  regex_profile_id?: string;

  /** Default true: the character's first message becomes the greeting floor. */
  @IsOptional()
  @IsBoolean()
  greeting?: boolean;
}

/** `PATCH /sessions/:id`: at least one field. Binding ids accept `null` to clear; `worldbook_ids: []` clears. */
export class UpdateSessionDto {
  @ValidateIf((o: UpdateSessionDto) => o.title !== undefined)
  @IsString()
  @Length(1, SESSION_TITLE_MAX)
  @Matches(NOT_BLANK, { message: 'title must not be blank' })
  title?: string;

  @ValidateIf((o: UpdateSessionDto) => o.status !== undefined)
  @IsIn(SESSION_STATUSES)
  status?: 'active' | 'archived';

  @IsOptional()
  @IsString()
  @Length(1, BINDING_ID_MAX)
  character_id?: string | null;

  @IsOptional()
  @IsString()
  @Length(1, BINDING_ID_MAX)
  character_version_id?: string | null;

  @IsOptional()
  @IsString()
  @Length(1, BINDING_ID_MAX)
  user_card_id?: string | null;

  @IsOptional()
  @IsString()
  @Length(1, BINDING_ID_MAX)
  preset_id?: string | null;

  @ValidateIf((o: UpdateSessionDto) => o.worldbook_ids !== undefined)
  @IsArray()
  @ArrayMaxSize(WORLDBOOK_IDS_MAX)
  @ArrayUnique()
  @IsString({ each: true })
  @Length(1, BINDING_ID_MAX, { each: true })
  worldbook_ids?: string[];

  @IsOptional()
  @IsString()
  @Length(1, BINDING_ID_MAX)
  regex_profile_id?: string | null;
}

export class ListSessionsQueryDto {
  @IsOptional()
  @IsIn(SESSION_STATUSES)
  status?: 'active' | 'archived';

  /** Default 50, max 200. */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_LIMIT)
  limit: number = DEFAULT_PAGE_LIMIT;

  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  offset: number = 0;
}

/** The session object of spec 2/3 routes. It has no `workspace_id` or `project_id` (spec 1 point 8). */
export interface SessionView {
  id: string;
  title: string;
  status: 'active' | 'archived';
  character_id: string | null;
  character_version_id: string | null;
  user_card_id: string | null;
  preset_id: string | null;
  worldbook_ids: string[];
  regex_profile_id: string | null;
  archived_at: number | null;
  created_at: number;
  updated_at: number;
}

export const toSessionView = (s: SessionRow): SessionView => ({
  id: s.id,
  title: s.title,
  status: s.status,
  character_id: s.character_id,
  character_version_id: s.character_version_id,
  user_card_id: s.user_card_id,
  preset_id: s.preset_id,
  worldbook_ids: s.worldbook_ids,
  regex_profile_id: s.regex_profile_id,
  archived_at: s.archived_at,
  created_at: s.created_at,
  updated_at: s.updated_at,
});

/** `GET /sessions/:id/scope` (spec 1: payload not shown; this is Hearth's design). */
export const toSessionScopeView = (scope: SessionScope) => ({
  session_id: scope.sessionId,
  workspace: { id: scope.workspace.id, name: scope.workspace.name, is_default: scope.workspace.is_default },
  project: {
    id: scope.project.id,
    name: scope.project.name,
    kind: scope.project.kind,
    status: scope.project.status,
    role: scope.role,
  },
});

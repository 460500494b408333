import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Length, Matches, Max, Min, ValidateIf } from 'class-validator';
import {
  INBOX_ENTRY_STATUSES,
  INBOX_KIND_MAX_CHARS,
  INBOX_LIST_MAX_LIMIT,
  INBOX_REASON_MAX_CHARS,
  INBOX_TITLE_MAX_CHARS,
  type InboxEntryStatus,
} from '@hearth/domain';
import type { InboxEntryRow } from '@hearth/persistence';

/** Query strings and ids are passed to Postgres, which refuses NUL characters. */
// eslint-disable-next-line no-control-regex -- NUL is exactly what this refuses
const NO_NUL = /^[^\u0000]*$/;
const NO_NUL_MESSAGE = { message: '$property must not contain NUL characters' };

/**
 * `POST /projects/:id/inbox`. Lengths of `kind` and `title` and the `body` checks are judged by the
 * inbox rules (characters counted as code points; `inbox_entry_payload_invalid`,
 * `inbox_entry_payload_too_large`).
 */
export class CreateInboxEntryDto {
  @ApiProperty({ type: String, minLength: 1, maxLength: INBOX_KIND_MAX_CHARS })
  @IsString()
  kind!: string;

  @ApiProperty({ type: String, minLength: 1, maxLength: INBOX_TITLE_MAX_CHARS })
  @IsString()
  title!: string;

  /** Default `{}`; `null` is a JSON value and is kept. */
  @ApiPropertyOptional({ description: 'Any JSON value, at most 64 KiB serialised; default {}' })
  @IsOptional()
  body?: unknown;

  @ApiPropertyOptional({ type: String, nullable: true })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  @Matches(NO_NUL, NO_NUL_MESSAGE)
  source_session_id?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  @Matches(NO_NUL, NO_NUL_MESSAGE)
  source_floor_id?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  @Matches(NO_NUL, NO_NUL_MESSAGE)
  source_page_id?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  @Matches(NO_NUL, NO_NUL_MESSAGE)
  derived_output_id?: string | null;
}

/** `POST /projects/:id/inbox/:entry_id/accept|reject`; the body may be empty. */
export class DecideInboxEntryDto {
  @ApiPropertyOptional({ type: String, nullable: true, minLength: 1, maxLength: INBOX_REASON_MAX_CHARS })
  @ValidateIf((o: DecideInboxEntryDto) => o.reason !== undefined && o.reason !== null)
  @IsString()
  reason?: string | null;
}

export class ListInboxEntriesQueryDto {
  @ApiPropertyOptional({ type: String, enum: INBOX_ENTRY_STATUSES })
  @IsOptional()
  @IsIn(INBOX_ENTRY_STATUSES)
  status?: InboxEntryStatus;

  @ApiPropertyOptional({ type: String })
  @IsOptional()
  @IsString()
  @Matches(NO_NUL, NO_NUL_MESSAGE)
  kind?: string;

  @ApiPropertyOptional({ type: String })
  @IsOptional()
  @IsString()
  @Matches(NO_NUL, NO_NUL_MESSAGE)
  source_session_id?: string;

  @ApiPropertyOptional({ type: String })
  @IsOptional()
  @IsString()
  @Matches(NO_NUL, NO_NUL_MESSAGE)
  created_by_account_id?: string;

  @ApiPropertyOptional({ type: Number, minimum: 1, maximum: INBOX_LIST_MAX_LIMIT, default: 50 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(INBOX_LIST_MAX_LIMIT)
  limit?: number;

  @ApiPropertyOptional({ type: String, description: 'The previous page’s next_cursor' })
  @IsOptional()
  @IsString()
  cursor?: string;
}

/** An inbox entry (docs/decisions.md "Inbox"). */
export interface InboxEntryView {
  id: string;
  workspace_id: string;
  project_id: string;
  account_id: string;
  created_by_account_id: string;
  created_by_client_id: string;
  kind: string;
  title: string;
  body: unknown;
  source_session_id: string | null;
  source_floor_id: string | null;
  source_page_id: string | null;
  derived_output_id: string | null;
  status: InboxEntryStatus;
  decision_reason: string | null;
  decided_by_account_id: string | null;
  decided_by_client_id: string | null;
  decided_at: number | null;
  created_at: number;
  updated_at: number;
}

export const toInboxEntryView = (e: InboxEntryRow): InboxEntryView => ({
  id: e.id,
  workspace_id: e.workspace_id,
  project_id: e.project_id,
  account_id: e.account_id,
  created_by_account_id: e.created_by_account_id,
  created_by_client_id: e.created_by_client_id,
  kind: e.kind,
  title: e.title,
  body: e.body,
  source_session_id: e.source_session_id,
  source_floor_id: e.source_floor_id,
  source_page_id: e.source_page_id,
  derived_output_id: e.derived_output_id,
  status: e.status,
  decision_reason: e.decision_reason,
  decided_by_account_id: e.decided_by_account_id,
  decided_by_client_id: e.decided_by_client_id,
  decided_at: e.decided_at,
  created_at: e.created_at,
  updated_at: e.updated_at,
});

import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Length, Matches, Max, Min } from 'class-validator';
import {
  TRANSCRIPT_DEFAULT_LIMIT,
  TRANSCRIPT_MAX_LIMIT,
  type FloorWithPages,
  type PageWithMessagesView,
} from '@hearth/app';
import type { BranchRow, BranchWithHead, MessageRow, PageStagedWriteRow } from '@hearth/persistence';

const ID_MAX = 200;
export const BRANCH_NAME_MAX = 120;
const NOT_BLANK = /\S/;

/** `GET /sessions/:id/floors` query (CONTRACT.md "Sessions"). */
export class ListFloorsQueryDto {
  @IsOptional()
  @IsString()
  @Length(1, ID_MAX)
  branch_id?: string;

  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  after_floor_no?: number;

  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  before_floor_no?: number;

  /** Default 100, max 500. */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(TRANSCRIPT_MAX_LIMIT)
  limit: number = TRANSCRIPT_DEFAULT_LIMIT;
}

/** `POST /floors/:id/branch`. */
export class CreateBranchDto {
  /** 1-120 characters, not blank, unique in the session; default `branch-<n>`. */
  @IsOptional()
  @IsString()
  @Length(1, BRANCH_NAME_MAX)
  @Matches(NOT_BLANK, { message: 'name must not be blank' })
  name?: string;
}

/** `POST /sessions/:id/branches/:branchId/reset`. */
export class ResetBranchDto {
  @IsString()
  @Length(1, ID_MAX)
  floor_id!: string;
}

const toMessageView = (m: MessageRow) => ({
  id: m.id,
  seq: m.seq,
  role: m.role,
  content: m.content,
  content_format: m.content_format,
  is_hidden: m.is_hidden,
  source: m.source,
  created_at: m.created_at,
});

const toPageView = ({ page, messages }: PageWithMessagesView) => ({
  id: page.id,
  page_no: page.page_no,
  page_kind: page.page_kind,
  is_active: page.is_active,
  version: page.version,
  checksum: page.checksum,
  created_at: page.created_at,
  updated_at: page.updated_at,
  messages: messages.map(toMessageView),
});

/** A transcript floor: exactly the fields of spec 2 "Transcript". */
export const toFloorView = ({ floor, pages }: FloorWithPages) => ({
  id: floor.id,
  floor_no: floor.floor_no,
  branch_id: floor.branch_id,
  parent_floor_id: floor.parent_floor_id,
  state: floor.state,
  token_in: floor.token_in,
  token_out: floor.token_out,
  created_at: floor.created_at,
  updated_at: floor.updated_at,
  reasoning_text: floor.state === 'committed' ? floor.reasoning_text : null,
  pages: pages.map(toPageView),
});

/** `GET /floors/:id` and `POST /pages/:id/activate`: the transcript floor plus session and supersession. */
export const toFloorDetailView = (loaded: FloorWithPages) => ({
  ...toFloorView(loaded),
  session_id: loaded.floor.session_id,
  superseded_at: loaded.floor.superseded_at,
  superseded_by_floor_id: loaded.floor.superseded_by_floor_id,
});

export const toBranchView = (b: BranchWithHead) => ({
  id: b.id,
  session_id: b.session_id,
  name: b.name,
  source_floor_id: b.source_floor_id,
  head_floor_id: b.head_floor_id,
  head_floor_no: b.head_floor_no,
  created_at: b.created_at,
  updated_at: b.updated_at,
});

export const toCreatedBranchView = (b: BranchRow) => ({
  branch_id: b.id,
  session_id: b.session_id,
  source_floor_id: b.source_floor_id,
});

/** A page candidate (target `page_staged_write`): an export's or an agent's proposed messages for a page. */
export const toPageCandidateView = (row: PageStagedWriteRow) => ({
  id: row.id,
  target: row.target,
  status: row.status,
  target_page_id: row.target_page_id,
  session_id: row.session_id,
  source_kind: row.source_kind,
  source_conversation_id: row.source_conversation_id,
  source_page_id: row.source_page_id,
  source_job_id: row.source_job_id,
  reason: row.reason,
  messages: row.content,
  created_by_client_id: row.created_by_client_id,
  created_at: row.created_at,
});

import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Length, Matches, Max, Min, ValidateIf } from 'class-validator';
import type { AccountRow } from '@hearth/persistence';

const NOT_BLANK = /\S/;

export class CreateAccountDto {
  /** Generated (`acc_...`) when absent. */
  @IsOptional()
  @IsString()
  @Length(1, 120)
  @Matches(NOT_BLANK, { message: 'id must not be blank' })
  id?: string;

  @IsString()
  @Length(1, 120)
  @Matches(NOT_BLANK, { message: 'name must not be blank' })
  name!: string;

  /** Default `user`. */
  @IsOptional()
  @IsIn(['admin', 'user'])
  role?: 'admin' | 'user';
}

/**
 * At least one field (checked by the use case); null is not a value of any (400, like
 * `UpdateClientDto`: `@IsOptional` would let null through to the NOT NULL columns).
 */
export class UpdateAccountDto {
  @ValidateIf((o: UpdateAccountDto) => o.name !== undefined)
  @IsString()
  @Length(1, 120)
  @Matches(NOT_BLANK, { message: 'name must not be blank' })
  name?: string;

  @ValidateIf((o: UpdateAccountDto) => o.role !== undefined)
  @IsIn(['admin', 'user'])
  role?: 'admin' | 'user';

  @ValidateIf((o: UpdateAccountDto) => o.status !== undefined)
  @IsIn(['active', 'disabled'])
  status?: 'active' | 'disabled';
}

/** The `:id` of a path; ids are opaque strings (account ids may be chosen by the admin, 1-120). */
export class IdParamDto {
  @IsString()
  @Length(1, 200)
  id!: string;
}

/** Offset paging shared by the account and Client lists: limit 1-200 (default 50), offset from 0. */
export class OffsetPageQueryDto {
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(200)
  limit?: number;

  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  offset?: number;
}

export const offsetPage = (query: OffsetPageQueryDto) => ({
  limit: query.limit ?? 50,
  offset: query.offset ?? 0,
});

export const offsetPageMeta = (
  page: { total: number; limit: number; offset: number },
  returned: number,
  sortBy: string,
) => ({
  total: page.total,
  limit: page.limit,
  offset: page.offset,
  has_more: page.offset + returned < page.total,
  sort_by: sortBy,
  sort_order: 'asc' as const,
});

/** Spec 3 "Account". */
export interface AccountView {
  id: string;
  name: string;
  role: 'admin' | 'user';
  status: 'active' | 'disabled';
  is_default: boolean;
  created_at: number;
  updated_at: number;
}

export const toAccountView = (a: AccountRow): AccountView => ({
  id: a.id,
  name: a.name,
  role: a.role,
  status: a.status,
  is_default: a.is_default,
  created_at: a.created_at,
  updated_at: a.updated_at,
});

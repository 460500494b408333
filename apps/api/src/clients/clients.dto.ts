import { IsIn, IsString, Length, Matches, ValidateIf } from 'class-validator';
import type { ClientRow } from '@hearth/persistence';

const NOT_BLANK = /\S/;

export class CreateClientDto {
  @IsString()
  @Length(1, 120)
  @Matches(NOT_BLANK, { message: 'name must not be blank' })
  name!: string;
}

/** At least one field (checked by the use case); null is not a value of either (400). */
export class UpdateClientDto {
  @ValidateIf((o: UpdateClientDto) => o.name !== undefined)
  @IsString()
  @Length(1, 120)
  @Matches(NOT_BLANK, { message: 'name must not be blank' })
  name?: string;

  @ValidateIf((o: UpdateClientDto) => o.status !== undefined)
  @IsIn(['active', 'disabled'])
  status?: 'active' | 'disabled';
}

/** A Client as the API shows it; keys are never part of it except once, at creation. */
export interface ClientView {
  id: string;
  account_id: string;
  name: string;
  status: 'active' | 'disabled';
  is_default: boolean;
  created_at: number;
  updated_at: number;
}

export const toClientView = (c: ClientRow): ClientView => ({
  id: c.id,
  account_id: c.account_id,
  name: c.name,
  status: c.status,
  is_default: c.is_default,
  created_at: c.created_at,
  updated_at: c.updated_at,
});

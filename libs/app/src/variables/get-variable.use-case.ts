import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { variablesRepository, type Db, type VariableRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { variableNotFound } from './variable-rules';

/** `GET /variables/:id`: a variable of the caller's account, else 404 `variable_not_found`. */
@Injectable()
export class GetVariableUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, id: string): Promise<VariableRow> {
    const variable = await variablesRepository.findById(this.db, actor.accountId, id);
    if (!variable) throw variableNotFound();
    return variable;
  }
}

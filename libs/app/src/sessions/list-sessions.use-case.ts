import { Inject, Injectable } from '@nestjs/common';
import { offsetMeta, type OffsetMeta } from '@hearth/domain';
import type { Actor } from '@hearth/permissions';
import { sessionsRepository, type Db, type SessionRow, type SessionStatus } from '@hearth/persistence';
import { DB } from '@hearth/platform';

export interface ListSessionsInput {
  status?: SessionStatus;
  limit: number;
  offset: number;
}

/**
 * `GET /sessions`: every session the caller can read (the sessions of the Projects it owns or is a
 * member of), newest first, offset paging with `meta`.
 */
@Injectable()
export class ListSessionsUseCase {
  constructor(@Inject(DB) private readonly db: Db) {}

  async execute(actor: Actor, input: ListSessionsInput): Promise<{ items: SessionRow[]; meta: OffsetMeta }> {
    const { rows, total } = await sessionsRepository.listReadableSessions(this.db, {
      subject: actor,
      ...input,
    });
    return { items: rows, meta: offsetMeta(total, input.limit, input.offset) };
  }
}

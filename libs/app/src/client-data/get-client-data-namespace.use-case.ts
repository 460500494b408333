import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { clientDataRepository, type ClientDataNamespaceRow, type Db } from '@hearth/persistence';
import { CONFIG, DB, type AppConfig } from '@hearth/platform';
import { requireClientDataEnabled, requireNamespaceOfAccount } from './client-data-rules';

export interface ClientDataNamespaceDetail {
  namespace: ClientDataNamespaceRow;
  /** The session state writes stored in it (every floor and branch), their sessions and value bytes. */
  usage: { writes: number; sessions: number; bytes: number };
}

/** `GET /client-data/namespaces/:name`: a namespace of the caller's account with its usage, else 404. */
@Injectable()
export class GetClientDataNamespaceUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  async execute(actor: Actor, name: string): Promise<ClientDataNamespaceDetail> {
    requireClientDataEnabled(this.config);
    const namespace = await requireNamespaceOfAccount(this.db, actor, name);
    const usage = await clientDataRepository.namespaceUsage(this.db, namespace.id);
    return { namespace, usage };
  }
}

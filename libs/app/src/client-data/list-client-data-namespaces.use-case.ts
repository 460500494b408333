import { Inject, Injectable } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import { clientDataRepository, type ClientDataNamespaceRow, type Db } from '@hearth/persistence';
import { CONFIG, DB, type AppConfig } from '@hearth/platform';
import { requireClientDataEnabled } from './client-data-rules';

/** `GET /client-data/namespaces`: the caller's account's namespaces, by name. */
@Injectable()
export class ListClientDataNamespacesUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  async execute(actor: Actor): Promise<ClientDataNamespaceRow[]> {
    requireClientDataEnabled(this.config);
    return clientDataRepository.listNamespaces(this.db, actor.accountId);
  }
}

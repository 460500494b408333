import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { DomainError, hashApiKey } from '@hearth/domain';
import { credentialsRepository, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import type { AuthenticatedRequest } from './actor.decorator';
import { IS_PUBLIC } from './public.decorator';

/**
 * `x-api-key` on every route but the public ones. Missing or unknown: 401 `unauthorized`; a key of a
 * disabled account or Client: 403 `account_disabled` / `client_disabled`. A disabled account can
 * reach nothing, so the check runs on every request against the database (no cache).
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(DB) private readonly db: Db,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (isPublic) return true;

    const request = context
      .switchToHttp()
      .getRequest<AuthenticatedRequest & { headers: Record<string, unknown> }>();
    const header = request.headers['x-api-key'];
    const key = typeof header === 'string' ? header.trim() : '';
    if (!key) throw new DomainError('unauthorized', 401, 'Missing x-api-key header');

    const row = await credentialsRepository.findByKeyHash(this.db, hashApiKey(key));
    if (!row) throw new DomainError('unauthorized', 401, 'Unknown API key');
    if (row.account_status !== 'active')
      throw new DomainError('account_disabled', 403, 'The account is disabled');
    if (row.client_status !== 'active')
      throw new DomainError('client_disabled', 403, 'The Client is disabled');

    request.actor = {
      kind: row.client_is_default ? 'account' : 'client',
      accountId: row.account_id,
      accountRole: row.account_role,
      clientId: row.client_id,
      clientIsDefault: row.client_is_default,
    };
    return true;
  }
}

import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { DomainError, hashApiKey } from '@hearth/domain';
import { CredentialLookup, type Db } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import type { AuthenticatedRequest } from './actor.decorator';
import { ENVELOPE, type EnvelopedRequest, type EnvelopeStyle, ROUTE_ENVELOPE } from './envelope';
import { IS_PUBLIC } from './public.decorator';

/** What a handler's decorators say about it, read once per handler instead of on every request. */
interface RouteOptions {
  isPublic: boolean;
  envelope: EnvelopeStyle;
}

/**
 * `x-api-key` on every route but the public ones. Missing or unknown: 401 `unauthorized`; a key of a
 * disabled account or Client: 403 `account_disabled` / `client_disabled`. A disabled account can
 * reach nothing, so the check runs on every request against the database (no cache). The lookups of
 * concurrent requests share statements (CredentialLookup), each answered by one that started after
 * its request arrived.
 *
 * Being the one global guard, it also records the handler's `@Envelope` style on the request for
 * the reply (envelope.ts), so no interceptor is needed.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  /** Per controller class, per handler (a handler of a base class can serve several classes). */
  private readonly routes = new WeakMap<object, WeakMap<object, RouteOptions>>();

  /** The key lookups of this process's requests (coalesced, never cached). */
  private readonly credentials: CredentialLookup;

  constructor(
    private readonly reflector: Reflector,
    @Inject(DB) db: Db,
  ) {
    this.credentials = new CredentialLookup(db);
  }

  private routeOptions(context: ExecutionContext): RouteOptions {
    const handler = context.getHandler();
    const controller = context.getClass();
    let byHandler = this.routes.get(controller);
    if (!byHandler) {
      byHandler = new WeakMap();
      this.routes.set(controller, byHandler);
    }
    let options = byHandler.get(handler);
    if (!options) {
      const targets = [handler, controller];
      options = {
        isPublic: this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets) === true,
        envelope: this.reflector.getAllAndOverride<EnvelopeStyle>(ENVELOPE, targets) ?? 'data',
      };
      byHandler.set(handler, options);
    }
    return options;
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const route = this.routeOptions(context);
    const request = context
      .switchToHttp()
      .getRequest<AuthenticatedRequest & EnvelopedRequest & { headers: Record<string, unknown> }>();
    request[ROUTE_ENVELOPE] = route.envelope;
    if (route.isPublic) return true;

    const header = request.headers['x-api-key'];
    const key = typeof header === 'string' ? header.trim() : '';
    if (!key) throw new DomainError('unauthorized', 401, 'Missing x-api-key header');

    const row = await this.credentials.find(hashApiKey(key));
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

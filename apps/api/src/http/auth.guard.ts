import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { DomainError, hashApiKey } from '@hearth/domain';
import type { CredentialCache } from '@hearth/persistence';
import { CREDENTIALS } from '@hearth/platform';
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
 * disabled account or Client: 403 `account_disabled` / `client_disabled`. Keys are looked up through
 * the process's CredentialCache: cached while the database's credential-change notifications are
 * received, so a disabled account or Client is refused by the next request this process serves after
 * the change (another API process: once the notification arrives, milliseconds later); otherwise
 * from the database, the lookups of concurrent requests sharing statements.
 *
 * Being the one global guard, it also records the handler's `@Envelope` style on the request for
 * the reply (envelope.ts), so no interceptor is needed.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  /** Per controller class, per handler (a handler of a base class can serve several classes). */
  private readonly routes = new WeakMap<object, WeakMap<object, RouteOptions>>();

  constructor(
    private readonly reflector: Reflector,
    @Inject(CREDENTIALS) private readonly credentials: CredentialCache,
  ) {}

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

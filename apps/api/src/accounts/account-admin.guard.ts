import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { requireAccountAdmin } from '@hearth/app';
import type { AuthenticatedRequest } from '../http/actor.decorator';

/**
 * 403 `account_forbidden` on every account route for any caller but the default Client of an admin
 * account. A guard runs after the global auth guard and before the validation pipe, so the 403 comes
 * before any 400 of the path, query or body (docs/decisions.md "Accounts and Clients": admin first).
 * The use cases check it again for other callers.
 */
@Injectable()
export class AccountAdminGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const actor = context.switchToHttp().getRequest<AuthenticatedRequest>().actor;
    if (!actor) throw new Error('AccountAdminGuard used on a public route');
    requireAccountAdmin(actor);
    return true;
  }
}

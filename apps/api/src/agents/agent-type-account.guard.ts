import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { requireAgentTypeActor } from '@hearth/app';
import type { AuthenticatedRequest } from '../http/actor.decorator';

/**
 * 403 `agent_type_account_only` on every Agent Type route for a caller that is not an account (its
 * default Client). A guard runs after the global auth guard and before the validation pipe, so the 403
 * comes before any 400 of the body (docs/decisions.md "Agents": the Client check first). The use cases
 * check it again for other callers.
 */
@Injectable()
export class AgentTypeAccountGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const actor = context.switchToHttp().getRequest<AuthenticatedRequest>().actor;
    if (!actor) throw new Error('AgentTypeAccountGuard used on a public route');
    requireAgentTypeActor(actor);
    return true;
  }
}

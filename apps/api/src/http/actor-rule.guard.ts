import { type CanActivate, type ExecutionContext, Injectable, mixin, type Type } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';
import type { AuthenticatedRequest } from './actor.decorator';

/**
 * A guard that applies a rule about the caller alone (it throws the route's 403) after the global auth
 * guard and before the validation pipe, so that 403 comes before any 400 of the path, query or body.
 * The use cases apply the same rule again for other callers. `@UseGuards(ActorRuleGuard(rule))`.
 */
export function ActorRuleGuard(rule: (actor: Actor) => void): Type<CanActivate> {
  @Injectable()
  class ActorRule implements CanActivate {
    canActivate(context: ExecutionContext): boolean {
      const actor = context.switchToHttp().getRequest<AuthenticatedRequest>().actor;
      if (!actor) throw new Error('ActorRuleGuard used on a public route');
      rule(actor);
      return true;
    }
  }
  return mixin(ActorRule);
}

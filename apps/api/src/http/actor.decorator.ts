import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Actor } from '@hearth/permissions';

export interface AuthenticatedRequest {
  actor?: Actor;
  requestId?: string;
}

/** The authenticated caller, set by the auth guard. */
export const CurrentActor = createParamDecorator((_: unknown, ctx: ExecutionContext): Actor => {
  const actor = ctx.switchToHttp().getRequest<AuthenticatedRequest>().actor;
  if (!actor) throw new Error('CurrentActor used on a public route');
  return actor;
});

/**
 * Who is calling: the Client whose key was presented, and the account it belongs to. The default
 * Client acts as its account (`kind: 'account'`); any other Client acts only as itself
 * (`kind: 'client'`), with no owner rights unless made a member (spec 1 "What the service does" 3).
 */
export interface Actor {
  kind: 'account' | 'client';
  accountId: string;
  accountRole: 'admin' | 'user';
  clientId: string;
  clientIsDefault: boolean;
}

export const isAdmin = (actor: Actor) => actor.accountRole === 'admin';

import { personaPlacementOfSnapshot, type PersonaPlacement } from '@hearth/domain';
import { userCardsRepository, type Executor, type SessionRow } from '@hearth/persistence';

/**
 * The persona placement the session's user card carries (its snapshot's `position`, `depth`, `role`,
 * when valid; `personaPlacementOfSnapshot`), `{}` without a live card. The session's own settings win
 * over it (docs/decisions.md "Author's note and persona position").
 */
export async function sessionPersonaPlacement(
  db: Executor,
  session: Pick<SessionRow, 'account_id' | 'user_card_id'>,
): Promise<PersonaPlacement> {
  if (!session.user_card_id) return {};
  const card = await userCardsRepository.findLive(db, session.account_id, session.user_card_id);
  return card ? personaPlacementOfSnapshot(card.snapshot) : {};
}

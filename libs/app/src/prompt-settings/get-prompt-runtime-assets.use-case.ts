import { Inject, Injectable } from '@nestjs/common';
import { ProjectAccess, type Actor } from '@hearth/permissions';
import {
  assetVersionsRepository,
  charactersRepository,
  presetsRepository,
  regexProfilesRepository,
  userCardsRepository,
  worldbooksRepository,
  type Db,
  type SessionRow,
} from '@hearth/persistence';
import { DB } from '@hearth/platform';
import { requirePromptRuntimeTarget } from '../prompt-runtime/prompt-runtime-access';

/** One library asset a session's prompt is assembled from, as the next turn will load it. */
export interface PromptRuntimeAsset {
  id: string;
  /** False when the asset is gone or not the account's: the turn then runs without it (a warning). */
  available: boolean;
  name: string | null;
  /** The version the next turn uses: the pinned one, else the latest. */
  version_id: string | null;
  version_no: number | null;
  updated_at: number | null;
}

export interface PromptRuntimeAssetsView {
  session_id: string;
  /**
   * `sync_policy` `pin` when the session names a character version (every session made by the routes),
   * `latest` when it names only the character; `latest_version_*` is the character's newest version,
   * so a client sees when the card has moved on from the pinned one.
   */
  character:
    | (PromptRuntimeAsset & {
        sync_policy: 'pin' | 'latest';
        latest_version_id: string | null;
        latest_version_no: number | null;
      })
    | null;
  user_card: PromptRuntimeAsset | null;
  preset: PromptRuntimeAsset | null;
  /** In the session's order (the order their entries are merged in). */
  worldbooks: PromptRuntimeAsset[];
  regex_profile: PromptRuntimeAsset | null;
}

const missing = (id: string): PromptRuntimeAsset => ({
  id,
  available: false,
  name: null,
  version_id: null,
  version_no: null,
  updated_at: null,
});

/**
 * `GET /sessions/:id/prompt-runtime/assets` (spec 2 names "the prompt-runtime ... assets routes";
 * docs/decisions.md "Prompt settings"): the library assets the session's next turn is assembled from
 * (character, persona, preset, worldbooks, regex profile), each with the version that turn will use
 * and whether it is still available, resolved as the turn context resolves them. Any member of the
 * session's Project; others 404. Read-only: binding assets is `PATCH /sessions/:id`.
 */
@Injectable()
export class GetPromptRuntimeAssetsUseCase {
  constructor(
    @Inject(DB) private readonly db: Db,
    private readonly access: ProjectAccess,
  ) {}

  async execute(actor: Actor, sessionId: string): Promise<PromptRuntimeAssetsView> {
    const { session } = await requirePromptRuntimeTarget(
      this.access,
      this.db,
      actor,
      sessionId,
      null,
      'read',
    );
    const worldbookIds = Array.isArray(session.worldbook_ids) ? (session.worldbook_ids as string[]) : [];
    const [character, userCard, preset, worldbooks, regexProfile] = await Promise.all([
      this.character(session),
      this.userCard(session),
      this.preset(session),
      Promise.all(worldbookIds.map((id) => this.worldbook(session.account_id, id))),
      this.regexProfile(session),
    ]);
    return {
      session_id: session.id,
      character,
      user_card: userCard,
      preset,
      worldbooks,
      regex_profile: regexProfile,
    };
  }

  private async character(session: SessionRow): Promise<PromptRuntimeAssetsView['character']> {
    const pinnedId = session.character_version_id;
    if (!pinnedId && !session.character_id) return null;
    const sync_policy = pinnedId ? ('pin' as const) : ('latest' as const);
    // A pinned version is used as long as it exists (as the turn context does), even if its
    // character has been deleted since; a followed character must exist.
    const pinned = pinnedId
      ? await assetVersionsRepository.findOfAccount(this.db, session.account_id, pinnedId, 'character')
      : undefined;
    const characterId = pinned?.asset_id ?? session.character_id;
    const character = characterId
      ? await charactersRepository.findOfAccount(this.db, session.account_id, characterId)
      : undefined;
    const version =
      pinned ??
      (character && !pinnedId
        ? await assetVersionsRepository.findOfAsset(this.db, character.id, character.latest_version_id)
        : undefined);
    const latest = {
      latest_version_id: character?.latest_version_id ?? null,
      latest_version_no: character?.version_no ?? null,
    };
    if (!version) return { ...missing(characterId ?? pinnedId!), sync_policy, ...latest };
    return {
      id: version.asset_id,
      available: true,
      name: character?.name ?? null,
      version_id: version.id,
      version_no: version.version_no,
      updated_at: version.created_at,
      sync_policy,
      ...latest,
    };
  }

  private async userCard(session: SessionRow): Promise<PromptRuntimeAsset | null> {
    if (!session.user_card_id) return null;
    const card = await userCardsRepository.findLive(this.db, session.account_id, session.user_card_id);
    if (!card) return missing(session.user_card_id);
    return {
      id: card.id,
      available: true,
      name: card.name,
      version_id: null,
      version_no: card.revision,
      updated_at: card.updated_at,
    };
  }

  private async preset(session: SessionRow): Promise<PromptRuntimeAsset | null> {
    if (!session.preset_id) return null;
    const preset = await presetsRepository.findOfAccount(this.db, session.account_id, session.preset_id);
    if (!preset) return missing(session.preset_id);
    return {
      id: preset.id,
      available: true,
      name: preset.name,
      version_id: preset.latest_version_id,
      version_no: preset.version_no,
      updated_at: preset.updated_at,
    };
  }

  private async worldbook(accountId: string, id: string): Promise<PromptRuntimeAsset> {
    const book = await worldbooksRepository.findOfAccount(this.db, accountId, id);
    if (!book) return missing(id);
    return {
      id: book.id,
      available: true,
      name: book.name,
      version_id: null,
      version_no: book.version,
      updated_at: book.updated_at,
    };
  }

  private async regexProfile(session: SessionRow): Promise<PromptRuntimeAsset | null> {
    if (!session.regex_profile_id) return null;
    const profile = await regexProfilesRepository.findOfAccount(
      this.db,
      session.account_id,
      session.regex_profile_id,
    );
    if (!profile) return missing(session.regex_profile_id);
    return {
      id: profile.id,
      available: true,
      name: profile.name,
      version_id: profile.latest_version_id,
      version_no: profile.version_no,
      updated_at: profile.updated_at,
    };
  }
}

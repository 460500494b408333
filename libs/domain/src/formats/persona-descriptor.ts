import {
  isInjectionDepth,
  PERSONA_POSITIONS,
  type PersonaPosition,
  type PromptRoleName,
} from '../prompt/engine/authors-note';
import { isPlainObject } from './format.rules';
import { ST_PERSONA_POSITIONS, ST_PROMPT_ROLES, stEnumName } from './st-prompt-enums';

/** Where a persona's description goes, as far as its card says (each key only when the card sets it). */
export interface PersonaPlacement {
  position?: PersonaPosition;
  depth?: number;
  role?: PromptRoleName;
}

/**
 * The placement a user card snapshot carries. SillyTavern keeps it per persona in its descriptor
 * (power-user.js `persona_descriptions[avatar] = {description, position, depth, role, lorebook, title}`);
 * a snapshot is free JSON, so each of `position`, `depth`, `role` is read when valid and ignored
 * otherwise: `position` an ST number (0, 1 = deprecated AFTER_CHAR read as in prompt, 2, 3, 4, 9) or
 * Hearth's name; `depth` an integer 0..MAX_INJECTION_DEPTH; `role` an ST number (0 system, 1 user, 2
 * assistant) or its name.
 */
export function personaPlacementOfSnapshot(snapshot: unknown): PersonaPlacement {
  if (!isPlainObject(snapshot)) return {};
  const placement: PersonaPlacement = {};
  const position = snapshot.position;
  if (typeof position === 'number' && Object.prototype.hasOwnProperty.call(ST_PERSONA_POSITIONS, position))
    placement.position = ST_PERSONA_POSITIONS[position];
  else if (typeof position === 'string' && (PERSONA_POSITIONS as readonly string[]).includes(position))
    placement.position = position as PersonaPosition;
  const depth = snapshot.depth;
  if (isInjectionDepth(depth)) placement.depth = depth;
  const role = snapshot.role;
  const roleName =
    stEnumName(ST_PROMPT_ROLES, role) ??
    (typeof role === 'string' && (ST_PROMPT_ROLES as readonly string[]).includes(role)
      ? (role as PromptRoleName)
      : undefined);
  if (roleName) placement.role = roleName;
  return placement;
}

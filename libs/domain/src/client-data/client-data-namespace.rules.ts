import { DomainError } from '../errors';
import { isUnstorableText } from '../text/storable-text';
import { CLIENT_DATA_LIMITS, PUBLIC_NAMESPACES, type ReplayPolicy } from './session-state.rules';

/**
 * The namespace registry's pure rules (docs/decisions.md "Client data and session state"): an account
 * registers custom namespaces by name; the service's own public namespaces cannot be registered.
 */

/** The settings of a namespace a registration or a PATCH may set. */
export interface NamespaceSettings {
  description: string | null;
  replay_policy: ReplayPolicy;
  max_items: number;
  max_bytes: number;
}

export const NAMESPACE_SETTING_FIELDS = ['description', 'replay_policy', 'max_items', 'max_bytes'] as const;
export type NamespaceSettingField = (typeof NAMESPACE_SETTING_FIELDS)[number];

const fieldProblem = (field: string, problem: string) =>
  new DomainError('validation_error', 400, `${field} ${problem}`, {
    fields: [{ field, problems: [`${field} ${problem}`] }],
  });

/** Whether `name` can name a registered namespace (the registry's name pattern, 1-64 characters). */
export const isNamespaceName = (name: string): boolean => CLIENT_DATA_LIMITS.namespaceName.test(name);

/** A public namespace (`game_state`) is the service's: 409 `client_data_namespace_reserved`. */
export function checkNamespaceNameFree(name: string): void {
  if (PUBLIC_NAMESPACES.includes(name))
    throw new DomainError(
      'client_data_namespace_reserved',
      409,
      `The namespace ${name} is reserved by the service`,
      { name },
    );
}

/**
 * A description is null or text Postgres stores as given, of at most 2000 characters counted as the
 * database counts them (code points; a request validator counting UTF-16 units or graphemes may
 * differ): 400 `validation_error` otherwise.
 */
export function checkNamespaceDescription(description: string | null | undefined): void {
  if (description === null || description === undefined) return;
  if (isUnstorableText(description))
    throw fieldProblem('description', 'must not contain NUL characters or unpaired UTF-16 surrogates');
  let count = 0;
  for (const _ of description) {
    if (++count > CLIENT_DATA_LIMITS.descriptionMaxChars)
      throw fieldProblem(
        'description',
        `must be at most ${CLIENT_DATA_LIMITS.descriptionMaxChars} characters`,
      );
  }
}

/** A registration's settings: given fields, the rest defaulted (`replay`, 1000 items, 1 MiB). */
export function namespaceSettings(input: Partial<NamespaceSettings>): NamespaceSettings {
  return {
    description: input.description ?? null,
    replay_policy: input.replay_policy ?? 'replay',
    max_items: input.max_items ?? CLIENT_DATA_LIMITS.defaultMaxItems,
    max_bytes: input.max_bytes ?? CLIENT_DATA_LIMITS.defaultMaxBytes,
  };
}

/**
 * What a PATCH changes: the given fields (undefined is not given; `description: null` clears it) whose
 * value differs from the current one. Empty when the PATCH changes nothing.
 */
export function namespaceChanges(
  current: NamespaceSettings,
  patch: Partial<NamespaceSettings>,
): Partial<NamespaceSettings> {
  const changes: Partial<NamespaceSettings> = {};
  for (const field of NAMESPACE_SETTING_FIELDS) {
    const value = patch[field];
    if (value !== undefined && value !== current[field]) Object.assign(changes, { [field]: value });
  }
  return changes;
}

/**
 * An account registers at most 100 namespaces: `registering` more on top of the `registered` ones is
 * 409 `client_data_namespace_limit_exceeded` (the route registers one, a backup restore several).
 */
export function checkNamespaceCount(registered: number, registering: number): void {
  const max = CLIENT_DATA_LIMITS.namespacesPerAccount;
  if (registering > 0 && registered + registering > max)
    throw new DomainError(
      'client_data_namespace_limit_exceeded',
      409,
      `An account may register at most ${max} namespaces`,
      { max_namespaces: max, registered, registering },
    );
}

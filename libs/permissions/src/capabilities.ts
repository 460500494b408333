/**
 * Spec 1 "Access by role", as one table. Every Project route asks this table through
 * `ProjectAccess`; nothing else decides who may do what on a Project.
 */
export type ProjectRole = 'owner' | 'observer' | 'deriver';

export const CAPABILITIES = {
  /** Read the Project, its session summaries and its events. */
  'project.read': ['owner', 'observer', 'deriver'],
  'project.observe': ['owner', 'observer', 'deriver'],
  /** See events whose visibility is `owner`. */
  'project.events.owner_visible': ['owner'],
  /** Modify sessions, floors, pages, messages, variables, memory. */
  'project.session.write': ['owner'],
  'project.derived_output.write': ['owner', 'deriver'],
  'project.inbox.create': ['owner', 'deriver'],
  'project.inbox.decide': ['owner'],
  'project.members.manage': ['owner'],
  'project.agent.manage': ['owner'],
  'project.config.write': ['owner'],
  'project.agent.read': ['owner', 'observer', 'deriver'],
  'project.config.read': ['owner', 'observer', 'deriver'],
  'project.agent.run': ['owner'],
  /** Archive and restore the Project itself. */
  'project.manage': ['owner'],
} as const satisfies Record<string, readonly ProjectRole[]>;

export type ProjectCapability = keyof typeof CAPABILITIES;

export function roleAllows(role: ProjectRole, capability: ProjectCapability): boolean {
  return (CAPABILITIES[capability] as readonly ProjectRole[]).includes(role);
}

/** Event visibility (spec 1): owners see `project` and `owner`; others `project`; `internal` never. */
export function visibleEventLevels(role: ProjectRole): Array<'project' | 'owner'> {
  return roleAllows(role, 'project.events.owner_visible') ? ['project', 'owner'] : ['project'];
}

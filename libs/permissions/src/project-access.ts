import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@hearth/domain';
import { projectsRepository, type Executor, type ProjectRow } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import type { Actor } from './actor';
import { roleAllows, type ProjectCapability, type ProjectRole } from './capabilities';

export interface ProjectGrant {
  project: ProjectRow;
  role: ProjectRole;
}

/**
 * The one gate of every Project route: resolves the caller's role and checks the capability.
 * Non-members (including other accounts) get 404 `project_not_found`, so existence is not revealed;
 * members whose role lacks the capability get 403 `project_access_denied`.
 */
@Injectable()
export class ProjectAccess {
  constructor(@Inject(DB) private readonly db: Executor) {}

  /** The caller's role, or null for a non-member. The default Client owns its account's Projects. */
  async roleOf(actor: Actor, project: ProjectRow, db: Executor = this.db): Promise<ProjectRole | null> {
    if (project.account_id === actor.accountId && actor.clientIsDefault) return 'owner';
    return (await projectsRepository.findActiveMemberRole(db, project.id, actor)) ?? null;
  }

  async require(
    actor: Actor,
    projectId: string,
    capability: ProjectCapability,
    /**
     * `notFoundCode`: legacy resource routes (sessions, ...) answer non-members 404 `not_found` (spec 1).
     * `notFoundMessage`: the message the route gives for a missing object, so a non-member's 404 is the
     * same body as a missing id's (R8: existence is not revealed by the message either).
     */
    options: { db?: Executor; deniedCode?: string; notFoundCode?: string; notFoundMessage?: string } = {},
  ): Promise<ProjectGrant> {
    const db = options.db ?? this.db;
    return this.requireOn(actor, await projectsRepository.findProject(db, projectId), capability, options);
  }

  /** `require` on a Project row the caller read itself (with the resource, in one statement). */
  async requireOn(
    actor: Actor,
    project: ProjectRow | undefined,
    capability: ProjectCapability,
    options: { db?: Executor; deniedCode?: string; notFoundCode?: string; notFoundMessage?: string } = {},
  ): Promise<ProjectGrant> {
    const role = project ? await this.roleOf(actor, project, options.db ?? this.db) : null;
    return grantFor(project, role, capability, options);
  }
}

/**
 * The gate's verdict on a Project row and the caller's role as read (`require`, or a write that reads
 * them in its own statement): 404 for a missing Project or a non-member, 403 for a role without the
 * capability, else the grant.
 */
export function grantFor(
  project: ProjectRow | undefined,
  role: ProjectRole | null,
  capability: ProjectCapability,
  options: { deniedCode?: string; notFoundCode?: string; notFoundMessage?: string } = {},
): ProjectGrant {
  if (!project || !role) {
    const code = options.notFoundCode ?? 'project_not_found';
    throw new DomainError(
      code,
      404,
      options.notFoundMessage ?? (code === 'project_not_found' ? 'Project not found' : 'Resource not found'),
    );
  }
  if (!roleAllows(role, capability)) {
    throw new DomainError(
      options.deniedCode ?? 'project_access_denied',
      403,
      `The ${role} role does not allow ${capability}`,
    );
  }
  return { project, role };
}

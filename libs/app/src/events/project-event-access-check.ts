import { Inject, Injectable } from '@nestjs/common';
import { type ProjectRole, roleAllows } from '@hearth/permissions';
import { type Db, projectEventsRepository } from '@hearth/persistence';
import { DB } from '@hearth/platform';
import type { ProjectEventStream } from './project-event-stream';

/** The `event: error` code that ends a stream whose caller lost access to the Project. */
export const STREAM_ACCESS_REVOKED = 'project_access_revoked';

export interface RevokedStream {
  stream: ProjectEventStream;
  message: string;
}

// Every role may observe, so "can still read the Project" is "may still observe it". Should a role
// without `project.observe` ever appear, this check must ask `ProjectAccess` per role instead.
const ROLES: Record<ProjectRole, true> = { owner: true, observer: true, deriver: true };
const EVERY_ROLE_OBSERVES = (Object.keys(ROLES) as ProjectRole[]).every((r) =>
  roleAllows(r, 'project.observe'),
);

/**
 * Re-checks the access of open streams, of any Projects, batched: one read of the callers' Client
 * and account status, then one read per distinct caller of which of its streams' Projects it can
 * still read (the rule of `ProjectAccess.roleOf`, as SQL). So a check costs at most one query per
 * stream, and usually far fewer (1,000 streams of one key: two queries).
 */
@Injectable()
export class ProjectEventAccessCheck {
  constructor(@Inject(DB) private readonly db: Db) {
    if (!EVERY_ROLE_OBSERVES) throw new Error('a Project role without project.observe: update the check');
  }

  /** The streams whose caller may no longer observe their Project, and why. */
  async revoked(streams: Iterable<ProjectEventStream>): Promise<RevokedStream[]> {
    const byClient = new Map<string, ProjectEventStream[]>();
    for (const stream of streams) {
      if (stream.actor === null || stream.isClosed) continue;
      const list = byClient.get(stream.actor.clientId);
      if (list) list.push(stream);
      else byClient.set(stream.actor.clientId, [stream]);
    }
    if (byClient.size === 0) return [];
    const active = new Set(await projectEventsRepository.activeClientIds(this.db, [...byClient.keys()]));
    const revoked: RevokedStream[] = [];
    for (const [clientId, list] of byClient) {
      if (!active.has(clientId)) {
        for (const stream of list) {
          revoked.push({ stream, message: 'The account or Client of this stream was disabled' });
        }
        continue;
      }
      const projectIds = [...new Set(list.map((s) => s.filter.projectId))];
      const readable = new Set(
        await projectEventsRepository.readableProjectIds(this.db, list[0].actor!, projectIds),
      );
      for (const stream of list) {
        if (!readable.has(stream.filter.projectId)) {
          revoked.push({ stream, message: 'Access to this Project was revoked' });
        }
      }
    }
    return revoked;
  }
}

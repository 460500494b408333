import { ProjectEventWriter, type ProjectEventInput } from '@hearth/app';
import { ID_PREFIX, newId } from '@hearth/domain';
import {
  inTransaction,
  type ProjectEventRow,
  type ProjectRow,
  type SessionRow,
  sessionsRepository,
} from '@hearth/persistence';
import type { TestApp } from '../test-app';

export type EventOptions = Partial<Omit<ProjectEventInput, 'project'>>;

type ProjectRef = Pick<ProjectRow, 'id' | 'workspace_id'>;

/**
 * Appends one event the way a use case does: `ProjectEventWriter.record` inside a transaction, so
 * the wake-up is published after commit.
 */
export async function appendEvent(
  t: TestApp,
  project: ProjectRef,
  options: EventOptions = {},
): Promise<ProjectEventRow> {
  const writer = t.app.get(ProjectEventWriter);
  return inTransaction(t.resources.database.db, (uow) =>
    writer.record(uow, {
      project: { id: project.id, workspace_id: project.workspace_id },
      type: options.type ?? 'test.event',
      payload: options.payload ?? { note: 'factory event' },
      ...options,
    }),
  );
}

/** Appends `count` events one transaction each, in order; `each(i)` varies them. */
export async function appendEvents(
  t: TestApp,
  project: ProjectRef,
  count: number,
  each: (index: number) => EventOptions = () => ({}),
): Promise<ProjectEventRow[]> {
  const rows: ProjectEventRow[] = [];
  for (let i = 0; i < count; i++) rows.push(await appendEvent(t, project, each(i)));
  return rows;
}

/** Several events in ONE transaction (they commit together, with consecutive sequences). */
export async function appendEventBatch(
  t: TestApp,
  project: ProjectRef,
  inputs: EventOptions[],
): Promise<ProjectEventRow[]> {
  const writer = t.app.get(ProjectEventWriter);
  return inTransaction(t.resources.database.db, async (uow) => {
    const rows: ProjectEventRow[] = [];
    for (const options of inputs) {
      rows.push(
        await writer.record(uow, {
          project: { id: project.id, workspace_id: project.workspace_id },
          type: options.type ?? 'test.event',
          payload: options.payload ?? { note: 'factory event' },
          ...options,
        }),
      );
    }
    return rows;
  });
}

/** A session row in the given Project, written through the repository (the events need a real one). */
export async function createSessionRow(
  t: TestApp,
  project: Pick<ProjectRow, 'id' | 'workspace_id' | 'account_id'>,
): Promise<SessionRow> {
  const now = Date.now();
  return sessionsRepository.insertSession(t.resources.database.db, {
    id: newId(ID_PREFIX.session),
    account_id: project.account_id,
    workspace_id: project.workspace_id,
    project_id: project.id,
    title: 'Event test session',
    status: 'active',
    character_id: null,
    character_version_id: null,
    user_card_id: null,
    preset_id: null,
    worldbook_ids: JSON.stringify([]),
    regex_profile_id: null,
    created_by_client_id: null,
    archived_at: null,
    created_at: now,
    updated_at: now,
  });
}

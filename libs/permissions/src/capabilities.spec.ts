import {
  CAPABILITIES,
  roleAllows,
  visibleEventLevels,
  type ProjectCapability,
  type ProjectRole,
} from './capabilities';

/** The spec 1 "Access by role" table, cell by cell (non-members never reach this table: 404). */
const SPEC_TABLE: Array<[ProjectCapability, owner: boolean, observer: boolean, deriver: boolean]> = [
  ['project.read', true, true, true],
  ['project.observe', true, true, true],
  ['project.events.owner_visible', true, false, false],
  ['project.session.write', true, false, false],
  ['project.derived_output.write', true, false, true],
  ['project.inbox.create', true, false, true],
  ['project.inbox.decide', true, false, false],
  ['project.members.manage', true, false, false],
  ['project.agent.manage', true, false, false],
  ['project.config.write', true, false, false],
  ['project.agent.read', true, true, true],
  ['project.config.read', true, true, true],
  ['project.agent.run', true, false, false],
  ['project.manage', true, false, false],
];

describe('capability table', () => {
  it('covers every capability', () => {
    expect(SPEC_TABLE.map(([c]) => c).sort()).toEqual(Object.keys(CAPABILITIES).sort());
  });

  it.each(SPEC_TABLE)('%s: owner %s, observer %s, deriver %s', (capability, owner, observer, deriver) => {
    const expected: Record<ProjectRole, boolean> = { owner, observer, deriver };
    for (const role of ['owner', 'observer', 'deriver'] as const) {
      expect(roleAllows(role, capability)).toBe(expected[role]);
    }
  });

  it('gives owners project and owner events, others project events only', () => {
    expect(visibleEventLevels('owner')).toEqual(['project', 'owner']);
    expect(visibleEventLevels('observer')).toEqual(['project']);
    expect(visibleEventLevels('deriver')).toEqual(['project']);
  });
});

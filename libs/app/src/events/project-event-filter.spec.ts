import { DomainError } from '@hearth/domain';
import { parseLastEventId } from './open-project-event-stream.use-case';
import { eventMatches, parseEventTypes, type ProjectEventFilter } from './project-event-filter';

describe('event filters', () => {
  it('splits comma-separated types, trimming blanks and repeats', () => {
    expect(parseEventTypes(undefined)).toEqual([]);
    expect(parseEventTypes('')).toEqual([]);
    expect(parseEventTypes(' a.b , c.d,,a.b, ')).toEqual(['a.b', 'c.d']);
  });

  it('matches visibility, types and session together', () => {
    const filter: ProjectEventFilter = {
      projectId: 'prj',
      visibilities: ['project'],
      types: ['x'],
      sessionId: 's1',
    };
    expect(eventMatches(filter, { visibility: 'project', type: 'x', sessionId: 's1' })).toBe(true);
    expect(eventMatches(filter, { visibility: 'owner', type: 'x', sessionId: 's1' })).toBe(false);
    expect(eventMatches(filter, { visibility: 'internal', type: 'x', sessionId: 's1' })).toBe(false);
    expect(eventMatches(filter, { visibility: 'project', type: 'y', sessionId: 's1' })).toBe(false);
    expect(eventMatches(filter, { visibility: 'project', type: 'x', sessionId: null })).toBe(false);
    const open: ProjectEventFilter = {
      projectId: 'prj',
      visibilities: ['project', 'owner'],
      types: [],
      sessionId: null,
    };
    expect(eventMatches(open, { visibility: 'owner', type: 'any', sessionId: null })).toBe(true);
    expect(eventMatches(open, { visibility: 'internal', type: 'any', sessionId: null })).toBe(false);
  });

  it('reads Last-Event-ID as a non-negative integer, or nothing', () => {
    expect(parseLastEventId(undefined)).toBeNull();
    expect(parseLastEventId('  ')).toBeNull();
    expect(parseLastEventId('0')).toBe(0);
    expect(parseLastEventId(' 42 ')).toBe(42);
    for (const bad of ['-1', '1.5', 'abc', '1e3', '9999999999999999']) {
      expect(() => parseLastEventId(bad)).toThrow(DomainError);
    }
  });
});

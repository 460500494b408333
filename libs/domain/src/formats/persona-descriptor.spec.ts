import { personaPlacementOfSnapshot } from './persona-descriptor';

/** ST power-user.js persona descriptor `{description, position, depth, role, lorebook, title}`. */
describe('personaPlacementOfSnapshot', () => {
  it('reads ST’s numbers: positions 0, 1 (deprecated AFTER_CHAR = in prompt), 2, 3, 4, 9; roles 0-2', () => {
    const position = (p: number) => personaPlacementOfSnapshot({ position: p }).position;
    expect([0, 1, 2, 3, 4, 9].map(position)).toEqual([
      'in_prompt',
      'in_prompt',
      'top_an',
      'bottom_an',
      'at_depth',
      'none',
    ]);
    expect([0, 1, 2].map((role) => personaPlacementOfSnapshot({ role }).role)).toEqual([
      'system',
      'user',
      'assistant',
    ]);
    expect(
      personaPlacementOfSnapshot({ name: 'Me', description: 'd', position: 4, depth: 3, role: 1 }),
    ).toEqual({
      position: 'at_depth',
      depth: 3,
      role: 'user',
    });
  });

  it('reads Hearth’s names too', () => {
    expect(personaPlacementOfSnapshot({ position: 'bottom_an', role: 'assistant', depth: 0 })).toEqual({
      position: 'bottom_an',
      depth: 0,
      role: 'assistant',
    });
  });

  it('ignores each invalid value on its own (the others still count)', () => {
    expect(personaPlacementOfSnapshot({ position: 5, depth: 2, role: 3 })).toEqual({ depth: 2 });
    expect(personaPlacementOfSnapshot({ position: 'after_char', depth: -1, role: 'narrator' })).toEqual({});
    expect(personaPlacementOfSnapshot({ position: 4.5, depth: 10_001, role: 1.5 })).toEqual({});
    expect(personaPlacementOfSnapshot({ position: '4', depth: '2', role: '0' })).toEqual({});
    expect(personaPlacementOfSnapshot({ depth: 10_000 })).toEqual({ depth: 10_000 });
    expect(personaPlacementOfSnapshot({ position: 'toString' })).toEqual({});
    expect(personaPlacementOfSnapshot(null)).toEqual({});
    expect(personaPlacementOfSnapshot([4])).toEqual({});
  });
});

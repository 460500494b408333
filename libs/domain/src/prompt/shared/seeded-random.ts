/**
 * A small seeded pseudo-random generator, so a turn that rolls dice, picks list items or tests lorebook
 * probabilities is reproducible from its seed (issue 4: "a seeded generator so a turn is reproducible").
 * Seeds are strings; `forkRandom` derives an independent stream for one purpose (macros, lorebook) so
 * adding a draw in one place never shifts the draws of another.
 */
export type RandomSource = () => number;

/** 32-bit FNV-1a over the UTF-16 code units, then mixed: a string seed to a 32-bit state. */
function hashSeed(seed: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < seed.length; i++) {
    h ^= seed.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h >>> 0;
}

/** mulberry32: uniform numbers in [0, 1) from a string seed. */
export function createSeededRandom(seed: string): RandomSource {
  let state = hashSeed(seed);
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An independent stream for one purpose, derived from a turn seed. */
export function forkRandom(seed: string, purpose: string): RandomSource {
  return createSeededRandom(`${seed}\u0000${purpose}`);
}

/** An integer in [min, max] (inclusive) from a random source. */
export function randomInt(random: RandomSource, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

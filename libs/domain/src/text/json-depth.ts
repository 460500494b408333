/**
 * The deepest JSON the service takes from outside (a request body, or a JSON file inside one: a card,
 * a chat line, an nchat or backup document); the value itself is level 1. Class-transformer,
 * class-validator, JSON.stringify and Postgres all recurse, and a value nested a few thousand levels
 * overflowed the stack (500). Rules with a lower bound of their own (128 for variable, derived output and
 * inbox values) still apply below this one.
 */
export const JSON_MAX_DEPTH = 256;

/**
 * Whether arrays and objects in `value` nest deeper than `max` levels (`value` itself is level 1).
 * Iterative, so no depth of input can exhaust the stack; stops at the first node past `max`.
 */
export function jsonNestedDeeperThan(value: unknown, max: number = JSON_MAX_DEPTH): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (max < 1) return true;
  const nodes: object[] = [value];
  const depths: number[] = [1];
  while (nodes.length > 0) {
    const node = nodes.pop()!;
    const depth = depths.pop()!;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child === null || typeof child !== 'object') continue;
      if (depth >= max) return true;
      nodes.push(child as object);
      depths.push(depth + 1);
    }
  }
  return false;
}

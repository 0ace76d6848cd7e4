// How deep a parsed JSON value nests. Every recursive walker (JSON.stringify when a value is stored
// or answered, schema serializers) overflows the stack somewhere past a few thousand levels, as a
// 500 after the request was accepted; nothing a client legitimately sends nests past a few dozen.

/** The deepest nesting any JSON body may have (objects and arrays); deeper is a 400. */
export const MAX_JSON_DEPTH = 64;

/**
 * Whether `value` nests objects/arrays deeper than `max` levels. Recursive but never deeper than
 * `max` + 1 calls (it stops there; callers give MAX_JSON_DEPTH), so it cannot overflow. It allocates
 * nothing, where a walk with its own stack took an entry and a values array per object of every poll.
 */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  return deeperFrom(value, 1, max);
}

function deeperFrom(v: object, depth: number, max: number): boolean {
  if (depth > max) return true;
  // for...in with the own-property test: what Object.values gives (array elements included).
  for (const k in v) {
    if (!Object.hasOwn(v, k)) continue;
    const child = (v as Record<string, unknown>)[k];
    if (child !== null && typeof child === 'object' && deeperFrom(child, depth + 1, max)) return true;
  }
  return false;
}

/**
 * nestedDeeperThan for a value parsed from `text`, without the walk when the text is too short to
 * nest that deep (each level takes an opening and a closing bracket): most bodies and stored values.
 */
export function jsonNestedDeeperThan(text: string, value: unknown, max: number): boolean {
  return text.length > 2 * max && nestedDeeperThan(value, max);
}

// How deep a parsed JSON value nests. Every recursive walker (JSON.stringify when a value is stored
// or answered, schema serializers) overflows the stack somewhere past a few thousand levels, as a
// 500 after the request was accepted; nothing a client legitimately sends nests past a few dozen.

/** The deepest nesting any JSON body may have (objects and arrays); deeper is a 400. */
export const MAX_JSON_DEPTH = 64;

/** Whether `value` nests objects/arrays deeper than `max` levels. Iterative, so it cannot overflow itself. */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (depth > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v as object)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
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

// Job args as one string whatever the order of their keys: equal args, equal keys. How the mirror
// finds a job with equal args already waiting.

export function argsKey(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(argsKey).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${argsKey(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

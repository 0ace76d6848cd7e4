// Query strings as the client writes them, without axios: the early entry (renderer/early.ts)
// builds its request with it before the client has loaded.
export type Query = Record<string, string | number | boolean | undefined | null>;

/** `?a=1&b=x`, leaving out empty values (an unset filter is no filter). */
export function queryString(q: Query = {}): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== null && v !== '') p.set(k, String(v));
  return p.toString();
}

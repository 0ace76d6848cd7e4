// What one NOTIFY carries between instances: the kind of change and the ids it touched, never the
// row. PostgreSQL refuses a payload of 8000 bytes or more (and the refusal aborts the transaction
// that made the change), and a row can grow past that (a build's commands, options, a long ref); a
// receiver that needs the row reads it, and reads the committed version, since a notification is
// delivered only after its transaction commits.

/** PostgreSQL's limit on a NOTIFY payload (bytes, in the server's encoding), exclusive. */
export const PG_NOTIFY_PAYLOAD_LIMIT = 8000;

/** The kinds of AppEventMap (server/events.ts) that other instances must see. */
export const CHANGE_KINDS = ['build:pending', 'build:finished', 'artifacts:stored'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

/** A change made by one instance, as others see it: ids only (see the header). */
export interface PgChange {
  kind: ChangeKind;
  buildId: number;
  projectId?: number;
  /** The build's status after the change ('canceled' is what a trace PATCH turns into Build-Status: canceled). */
  status?: string;
}

/** A change as received: who sent it (an instance id) as well. */
export interface PgChangeReceived extends PgChange {
  origin: string;
}

const STATUS = /^[a-z_]{1,32}$/;
const ORIGIN = /^[0-9a-zA-Z_-]{1,64}$/;
const isId = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n > 0;

/** The payload text; throws (before anything is sent) on a change that is not one of ours. */
export function encodeChange(origin: string, change: PgChange): string {
  if (!ORIGIN.test(origin)) throw new Error(`notify: bad instance id ${JSON.stringify(origin)}`);
  if (!(CHANGE_KINDS as readonly string[]).includes(change.kind)) throw new Error(`notify: unknown change kind ${JSON.stringify(change.kind)}`);
  if (!isId(change.buildId)) throw new Error(`notify: build id must be a positive integer, got ${String(change.buildId)}`);
  if (change.projectId !== undefined && !isId(change.projectId)) throw new Error(`notify: project id must be a positive integer, got ${String(change.projectId)}`);
  if (change.status !== undefined && !STATUS.test(change.status)) throw new Error(`notify: bad status ${JSON.stringify(change.status)}`);
  // Short keys: a burst of changes is a burst of payloads through the server's notification queue.
  const text = JSON.stringify({ o: origin, k: change.kind, b: change.buildId, p: change.projectId, s: change.status });
  // Cannot happen with the checks above (ids and a 32-letter status stay near 150 bytes); kept so a
  // field added later that can grow fails here, by name, and not as a rolled-back change.
  if (Buffer.byteLength(text) >= PG_NOTIFY_PAYLOAD_LIMIT) throw new Error(`notify: payload of ${Buffer.byteLength(text)} bytes is over PostgreSQL's limit`);
  return text;
}

/** The change in a payload, or null when it is not one this version wrote (a NOTIFY sent by hand, an older or newer instance's). */
export function decodeChange(payload: string | undefined): PgChangeReceived | null {
  if (!payload) return null;
  let v: unknown;
  try {
    v = JSON.parse(payload);
  } catch {
    return null;
  }
  if (typeof v !== 'object' || v === null) return null;
  const { o, k, b, p, s } = v as Record<string, unknown>;
  if (typeof o !== 'string' || !ORIGIN.test(o)) return null;
  if (typeof k !== 'string' || !(CHANGE_KINDS as readonly string[]).includes(k)) return null;
  if (!isId(b)) return null;
  if (p !== undefined && !isId(p)) return null;
  if (s !== undefined && (typeof s !== 'string' || !STATUS.test(s))) return null;
  const change: PgChangeReceived = { origin: o, kind: k as ChangeKind, buildId: b };
  if (p !== undefined) change.projectId = p;
  if (s !== undefined) change.status = s;
  return change;
}

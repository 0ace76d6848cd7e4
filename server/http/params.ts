// Grape merged the query string, urlencoded, multipart and JSON bodies into one `params` hash.
// `readParams` gives the same view, into a null-prototype object with prototype-polluting keys dropped.
import type { FastifyRequest } from 'fastify';
import { ApiError, badRequest, tooLarge } from './errors.ts';
import { StorageError } from '../store/ports/storage-error.ts';
import { fileStorageError } from '../store/ports/file-errors.ts';

export type Params = Record<string, unknown>;

const UNSAFE = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Rack's nested names in query strings and forms, one level deep: `info[name]=x` is `info: {name: x}`
 * (what `curl -F "info[version]=1.0"` sends) and `tag_list[]=a` is `tag_list: ['a']`.
 */
function setField(target: Params, key: string, value: unknown): void {
  const m = /^([^[\]]+)\[([^[\]]*)\]$/.exec(key);
  if (!m) {
    if (!UNSAFE.has(key)) target[key] = value;
    return;
  }
  const [, base, sub] = m as unknown as [string, string, string];
  if (UNSAFE.has(base) || UNSAFE.has(sub)) return;
  const values = Array.isArray(value) ? value : [value];
  if (sub === '') {
    const prev = target[base];
    target[base] = [...(Array.isArray(prev) ? prev : []), ...values];
    return;
  }
  let obj = target[base];
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) obj = target[base] = Object.create(null) as Params;
  (obj as Params)[sub] = values[values.length - 1];
}

function mergeInto(target: Params, source: unknown, nested: boolean): void {
  if (!source || typeof source !== 'object' || Array.isArray(source) || Buffer.isBuffer(source)) return;
  for (const [k, v] of Object.entries(source as Record<string, unknown>)) {
    if (nested) setField(target, k, v);
    else if (!UNSAFE.has(k)) target[k] = v;
  }
}

const MAX_FIELDS = 100;

/** Params from query and body. Multipart bodies are read here (fields only; files are refused). */
export async function readParams(request: FastifyRequest): Promise<Params> {
  const out: Params = Object.create(null) as Params;
  mergeInto(out, request.query, true);
  if (request.isMultipart()) {
    let n = 0;
    // Busboy reads the raw request, past fastify's body limit: the route's limit is kept here,
    // in total and per field (runner routes read only a small body before the token is known).
    const limit = request.routeOptions.bodyLimit;
    let total = 0;
    try {
      for await (const part of request.parts({ limits: { fieldSize: Math.min(limit, 1024 * 1024) } })) {
        if (++n > MAX_FIELDS) throw badRequest('too many multipart fields');
        if (part.type === 'file') {
          part.file.resume();
          continue;
        }
        // Busboy cuts a field at `fieldSize` and says so only in this flag: storing the cut value
        // (say, a full trace) and answering 200 would lose data silently.
        if (part.valueTruncated || part.fieldnameTruncated) throw tooLarge();
        total += part.fieldname.length + (typeof part.value === 'string' ? Buffer.byteLength(part.value) : 0);
        if (total > limit) throw tooLarge();
        setField(out, part.fieldname, part.value);
      }
    } catch (err) {
      throw asMultipartError(err);
    }
  } else {
    // A JSON body names its nesting itself; only form bodies use Rack's bracket names.
    const isJson = /^application\/json\b/i.test(String(request.headers['content-type'] ?? ''));
    mergeInto(out, request.body, !isJson);
  }
  return out;
}

/**
 * Busboy's errors carry no status; a broken multipart body is the client's fault. Storage trouble
 * met while storing the upload is not: it is answered as its kind (errors.ts), not as a 400.
 */
export function asMultipartError(err: unknown): unknown {
  const e = err as { statusCode?: number; message?: string };
  if (typeof e?.statusCode === 'number' || err instanceof ApiError || err instanceof StorageError || fileStorageError(err)) return err;
  return badRequest(`broken multipart body: ${e?.message ?? 'unreadable'}`);
}

/** Rails' `present?`, which Grape's `required_attributes!` used: "", "  ", false, [] and {} count as not given. */
export function given(v: unknown): boolean {
  if (v === undefined || v === null || v === false) return false;
  if (typeof v === 'string') return v.trim() !== '';
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v).length > 0;
  return true;
}

export function str(v: unknown): string | undefined {
  if (Array.isArray(v)) v = v[0];
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return undefined;
}

/** Grape's Boolean coercion: true/1/yes/on and false/0/no/off; anything else is the default. */
export function bool(v: unknown, dflt: boolean): boolean {
  if (typeof v === 'boolean') return v;
  const s = str(v)?.trim().toLowerCase();
  if (s === undefined) return dflt;
  if (['true', '1', 'yes', 'on', 't'].includes(s)) return true;
  if (['false', '0', 'no', 'off', 'f'].includes(s)) return false;
  return dflt;
}

/** Ruby's String#to_i: leading blanks, optional sign, digits; anything else is 0. */
export function rubyToI(s: string): number {
  const m = /^\s*([+-]?\d+)/.exec(s);
  return m ? Number(m[1]) : 0;
}

/** A path id as GitLab looks it up: digits only (an optional `.json` suffix allowed), else not found. */
export function pathId(raw: string | undefined, allowJson = false): number | undefined {
  if (typeof raw !== 'string') return undefined;
  const m = (allowJson ? /^(\d{1,15})(\.json)?$/ : /^(\d{1,15})$/).exec(raw);
  return m ? Number(m[1]) : undefined;
}

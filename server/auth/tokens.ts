// Token helpers. Lookups go by SHA-256 digest and fixed secrets are compared with
// crypto.timingSafeEqual, so no response time depends on how much of a secret a caller guessed.
import crypto from 'node:crypto';

/** 20 hex characters, the shape GitLab 8.x gives runner and build tokens. */
export function newToken(bytes = 10): string {
  return crypto.randomBytes(bytes).toString('hex');
}

export function digest(token: string): string {
  // The one-shot hash (UTF-8, as update(token, 'utf8') was): no Hash object per build created.
  return crypto.hash('sha256', token, 'hex');
}

export function safeEqual(a: string | undefined, b: string | undefined): boolean {
  if (typeof a !== 'string' || typeof b !== 'string') return false;
  // Hashing first gives equal lengths, which timingSafeEqual requires, without leaking the length.
  return crypto.timingSafeEqual(Buffer.from(digest(a), 'hex'), Buffer.from(digest(b), 'hex'));
}

/** Constant-time comparison of two SHA-256 hex digests (a stored one and one of a presented token). */
export function digestEqual(a: string, b: string | null | undefined): boolean {
  if (typeof b !== 'string' || a.length !== 64 || b.length !== 64) return false;
  return crypto.timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));
}

/** A header or parameter value as a token string, or undefined when it is not one. */
export function asToken(value: unknown): string | undefined {
  if (Array.isArray(value)) value = value[0];
  if (typeof value === 'number') value = String(value);
  if (typeof value !== 'string' || value.length === 0 || value.length > 512) return undefined;
  return value;
}

/**
 * How many presented tokens keep their SHA-256 (a fleet's runner and build tokens, well under this).
 * The map is emptied when full: a flood of made-up tokens costs a hash each again, never memory.
 */
const DIGEST_CACHE_MAX = 4096;
const digestBytes = new Map<string, Buffer>();
const digestHex = new Map<string, string>();

/**
 * SHA-256 of a presented token, remembered per token string: every trace part and every poll
 * presents the same token again, and the hash was the largest part of checking it. Looking a token
 * up here tells nothing about any other token: the map compares strings only when their full hashes
 * are equal, so a guess sharing a prefix with a remembered token is no faster than any other miss.
 * The caller must not change the returned bytes.
 */
export function tokenDigestBytes(token: string): Buffer {
  return remembered(digestBytes, token, sha256Bytes);
}

/** digest(token) (hex), remembered as tokenDigestBytes remembers the bytes. */
export function tokenDigestHex(token: string): string {
  return remembered(digestHex, token, digest);
}

const sha256Bytes = (token: string): Buffer => crypto.hash('sha256', token, 'buffer');

function remembered<T>(kept: Map<string, T>, token: string, hash: (token: string) => T): T {
  let d = kept.get(token);
  if (d === undefined) {
    d = hash(token);
    if (kept.size >= DIGEST_CACHE_MAX) kept.clear();
    kept.set(token, d);
  }
  return d;
}

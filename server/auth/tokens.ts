// Token helpers. Lookups go by SHA-256 digest and fixed secrets are compared with
// crypto.timingSafeEqual, so no response time depends on how much of a secret a caller guessed.
import crypto from 'node:crypto';

/** 20 hex characters, the shape GitLab 8.x gives runner and build tokens. */
export function newToken(bytes = 10): string {
  return crypto.randomBytes(bytes).toString('hex');
}

export function digest(token: string): string {
  return crypto.createHash('sha256').update(token, 'utf8').digest('hex');
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

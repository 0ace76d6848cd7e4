// Text that reaches PostgreSQL from outside the API's checks. PostgreSQL's text (and jsonb) cannot
// hold U+0000, where SQLite stores it; a write carrying one fails as a whole. What a client sends is
// refused at the API with a 400 on both stores (http/stored-text.ts); what the monitor reads from a
// remote server (an error message, a Sidekiq queue name) has no client to refuse, and must not lose
// the sample it belongs to: U+0000 is written as U+FFFD, the character that stands for one that
// could not be kept.

/** `s` with each U+0000 replaced by U+FFFD (null stays null). */
export function pgText<T extends string | null>(s: T): T {
  return (s !== null && s.includes('\u0000') ? s.replaceAll('\u0000', '\uFFFD') : s) as T;
}

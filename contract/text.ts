// Text rules shared by the contract's schemas.

/**
 * A string without U+0000, for text the server stores: PostgreSQL's text cannot hold it, so it is
 * refused on both stores alike (server/http/stored-text.ts says why; the runner and control APIs
 * check in code, these bodies by schema).
 */
export const NO_NUL = '^[^\\u0000]*$';

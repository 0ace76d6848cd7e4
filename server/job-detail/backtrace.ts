// A job's `error_backtrace` as lines. Sidekiq 6.4 stores it compressed (job_retry.rb:
// `Base64.encode64(Zlib::Deflate.deflate(Sidekiq.dump_json(backtrace)))`); older Sidekiqs stored
// the array itself. Bounded both ways: the inflated text (a small Base64 string can inflate to
// gigabytes) and the lines answered.
import zlib from 'node:zlib';

export const BACKTRACE_MAX_LINES = 500;
const LINE_MAX = 2000;
const INFLATED_MAX = 2 * 2 ** 20;

export interface Backtrace {
  lines: string[] | null;
  /** Why `lines` is null or shorter than what was stored. */
  note: string | null;
}

const UNDECODABLE = 'backtrace could not be decoded: it is shown as stored in the raw payload';

function bounded(all: unknown[]): Backtrace {
  const lines = all.slice(0, BACKTRACE_MAX_LINES).map((l) => {
    const s = typeof l === 'string' ? l : JSON.stringify(l) ?? String(l);
    return s.length > LINE_MAX ? `${s.slice(0, LINE_MAX)}…` : s;
  });
  const note = all.length > BACKTRACE_MAX_LINES ? `the first ${BACKTRACE_MAX_LINES} of ${all.length} lines` : null;
  return { lines, note };
}

export function decodeBacktrace(stored: unknown): Backtrace {
  if (stored === undefined || stored === null) return { lines: null, note: null };
  if (Array.isArray(stored)) return bounded(stored);
  if (typeof stored !== 'string') return { lines: null, note: UNDECODABLE };
  try {
    const inflated = zlib.inflateSync(Buffer.from(stored, 'base64'), { maxOutputLength: INFLATED_MAX });
    const parsed: unknown = JSON.parse(inflated.toString('utf8'));
    return Array.isArray(parsed) ? bounded(parsed) : { lines: null, note: UNDECODABLE };
  } catch {
    // Not Base64 of zlib data, past the inflated bound, or not JSON.
    return { lines: null, note: UNDECODABLE };
  }
}

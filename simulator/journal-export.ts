// The journal as HAR 1.2 (for browser dev tools, Charles, WireMock imports) and one entry as a
// curl command that sends the same request again.
import type { BodyPreview, JournalEntry } from '../contract/simulator.ts';

const STATUS_TEXT: Record<number, string> = {
  0: '', 200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No Content', 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden',
  404: 'Not Found', 409: 'Conflict', 413: 'Payload Too Large', 416: 'Range Not Satisfiable', 500: 'Internal Server Error', 503: 'Service Unavailable',
};

const headerValue = (headers: [string, string][], name: string) => headers.find(([n]) => n.toLowerCase() === name)?.[1];

function content(body: BodyPreview, mimeType: string) {
  if (body.text !== undefined) return { size: body.size, mimeType, text: body.text };
  if (body.base64 !== undefined) return { size: body.size, mimeType, text: body.base64, encoding: 'base64' };
  return { size: Math.max(0, body.size), mimeType };
}

export function toHar(entries: Iterable<JournalEntry>, creatorVersion = '0.1.0') {
  const out = [];
  for (const e of entries) {
    const url = new URL(e.url);
    const reqType = headerValue(e.request_headers, 'content-type') ?? '';
    const resType = headerValue(e.response_headers, 'content-type') ?? '';
    const request: Record<string, unknown> = {
      method: e.method,
      url: e.url,
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: e.request_headers.map(([name, value]) => ({ name, value })),
      queryString: [...url.searchParams].map(([name, value]) => ({ name, value })),
      headersSize: -1,
      bodySize: e.request_body.size,
    };
    if (e.request_body.size > 0) {
      const c = content(e.request_body, reqType);
      request.postData = { mimeType: reqType, text: c.text ?? '', ...(c.encoding ? { comment: 'base64-encoded' } : {}) };
    }
    out.push({
      startedDateTime: e.started_at,
      time: e.duration_ms,
      request,
      response: {
        status: e.status,
        statusText: STATUS_TEXT[e.status] ?? '',
        httpVersion: 'HTTP/1.1',
        cookies: [],
        headers: e.response_headers.map(([name, value]) => ({ name, value })),
        content: content(e.response_body, resType),
        redirectURL: '',
        headersSize: -1,
        bodySize: e.response_body.size,
        ...(e.error ? { _error: e.error } : {}),
      },
      cache: {},
      timings: { send: 0, wait: e.duration_ms, receive: 0 },
      comment: [`runner ${e.runner}`, e.fault ? `fault ${e.fault}` : '', e.build_id ? `build ${e.build_id}` : ''].filter(Boolean).join(', '),
    });
  }
  return { log: { version: '1.2', creator: { name: 'jobscope-simulator', version: creatorVersion }, pages: [], entries: out } };
}

/** POSIX shell quoting; bytes outside printable ASCII go into a $'…' string as \xHH escapes. */
export function shellQuote(s: string): string {
  if (/^[\x20-\x7e]*$/.test(s)) return `'${s.replace(/'/g, `'\\''`)}'`;
  let out = "$'";
  for (const b of Buffer.from(s, 'utf8')) {
    if (b === 0x27) out += "\\'";
    else if (b === 0x5c) out += '\\\\';
    else if (b >= 0x20 && b < 0x7f) out += String.fromCharCode(b);
    else out += `\\x${b.toString(16).padStart(2, '0')}`;
  }
  return out + "'";
}

// Set by curl itself or meaningless when replayed.
const SKIP = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'accept-encoding']);

export function toCurl(e: JournalEntry): { curl: string; complete: boolean } {
  const parts = ['curl', '-sS', '-i', '-X', e.method, shellQuote(e.url)];
  const type = headerValue(e.request_headers, 'content-type') ?? '';
  const multipart = type.startsWith('multipart/form-data');
  for (const [name, value] of e.request_headers) {
    if (SKIP.has(name.toLowerCase())) continue;
    if (multipart && name.toLowerCase() === 'content-type') continue; // curl -F writes its own boundary
    parts.push('-H', shellQuote(`${name}: ${value}`));
  }
  let complete = !e.request_body.truncated;
  if (multipart) {
    // The archive itself is not kept; the command uploads a file of the user's choosing.
    parts.push('-F', shellQuote('file=@artifacts.zip'));
    complete = false;
  } else if (e.request_body.text !== undefined) {
    parts.push('--data-binary', shellQuote(e.request_body.text));
  } else if (e.request_body.base64 !== undefined) {
    return { curl: `printf %s ${shellQuote(e.request_body.base64)} | base64 -d | ${parts.join(' ')} --data-binary @-`, complete };
  }
  return { curl: parts.join(' '), complete };
}

// The journal: bounded, filterable, exported as HAR 1.2, and each entry a curl command that sends
// the same request again (checked by running it against a recording server).
import { execFile } from 'node:child_process';
import http from 'node:http';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Journal, type NewEntry } from '../../simulator/journal.ts';
import { shellQuote } from '../../simulator/journal-export.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http as req } from '../helpers/http.ts';
import { waitFor } from '../helpers/wait.ts';

const run = promisify(execFile);

function entry(i: number, over: Partial<NewEntry> = {}): NewEntry {
  return {
    started_at: new Date(1_700_000_000_000 + i).toISOString(), duration_ms: 1, runner: `r${i % 3}`, method: i % 2 ? 'PATCH' : 'POST',
    url: `http://h/ci/api/v1/builds/${i}/trace.txt`, path: `/ci/api/v1/builds/${i}/trace.txt`, status: i % 4 === 0 ? 416 : 202,
    request_headers: [], response_headers: [], request_body: { bytes: undefined, size: 0 }, response_body: { bytes: undefined, size: 0 },
    fault: i % 5 === 0 ? 'wrong_range' : null, error: null, build_id: i, ...over,
  };
}

describe('journal ring buffer', () => {
  it('keeps the newest entries up to its capacity and counts the dropped ones', () => {
    const j = new Journal({ capacity: 10, bodyBytes: 100 });
    for (let i = 1; i <= 25; i++) j.add(entry(i));
    expect(j.size).toBe(10);
    expect(j.dropped).toBe(15);
    expect([...j.all()].map((e) => e.id)).toEqual([16, 17, 18, 19, 20, 21, 22, 23, 24, 25]);
    expect(j.get(3)).toBeUndefined();
    expect(j.get(20)?.build_id).toBe(20);
  });

  it('filters by runner, status (code or class), method, path, fault and since_id; limit keeps the last', () => {
    const j = new Journal({ capacity: 100, bodyBytes: 100 });
    for (let i = 1; i <= 40; i++) j.add(entry(i));
    expect(j.query({ runner: 'r1', limit: 100 }).every((e) => e.runner === 'r1')).toBe(true);
    expect(j.query({ status: '416', limit: 100 }).map((e) => e.build_id)).toEqual([4, 8, 12, 16, 20, 24, 28, 32, 36, 40]);
    expect(j.query({ status: '4xx', limit: 100 })).toHaveLength(10);
    expect(j.query({ status: '2xx', limit: 100 })).toHaveLength(30);
    expect(j.query({ method: 'patch', limit: 100 })).toHaveLength(20);
    expect(j.query({ path: '/builds/13/', limit: 100 }).map((e) => e.id)).toEqual([13]);
    expect(j.query({ fault: 'any', limit: 100 })).toHaveLength(8);
    expect(j.query({ since_id: 35, limit: 100 }).map((e) => e.id)).toEqual([36, 37, 38, 39, 40]);
    expect(j.query({ limit: 3 }).map((e) => e.id)).toEqual([38, 39, 40]);
  });
});

describe('journal bodies', () => {
  it('keeps a copy of each body\'s first bytes and previews it when read: text, base64, cut, across slabs', () => {
    const j = new Journal({ capacity: 7000, bodyBytes: 100 });
    const text = Buffer.from('{"state":"running","trace":"\u001b[32;1m✓\u001b[0;m ok"}');
    const binary = Buffer.from([0x50, 0x4b, 0x03, 0x04, 0, 0, 0xff, 0xfe]);
    const long = Buffer.from('é'.repeat(200)); // 400 bytes: cut at 100, inside no character
    const a = j.add(entry(1, { request_body: { bytes: text, size: text.length }, response_body: { bytes: binary, size: binary.length } }));
    const b = j.add(entry(2, { request_body: { bytes: long, size: 5000 }, response_body: { bytes: undefined, size: 0 } }));
    text.fill(0); // the caller's buffer may be reused: the journal has its own copy
    expect(j.get(a)!.request_body).toEqual({ size: text.length, text: '{"state":"running","trace":"\u001b[32;1m✓\u001b[0;m ok"}', truncated: false });
    expect(j.get(a)!.response_body).toEqual({ size: 8, base64: binary.toString('base64'), truncated: false });
    expect(j.get(b)!.request_body).toEqual({ size: 5000, text: 'é'.repeat(50), truncated: true });
    expect(j.get(b)!.response_body).toEqual({ size: 0, truncated: false });
    // 6,000 entries of 100 bytes fill three 256 KiB slabs: each still reads back its own bytes.
    const ids: number[] = [];
    for (let i = 0; i < 6000; i++) {
      const body = Buffer.from(`body ${i} `.padEnd(100, String.fromCharCode(97 + (i % 26))));
      ids.push(j.add(entry(i, { request_body: { bytes: body, size: 100 } })));
    }
    expect(ids.every((id, i) => j.get(id)!.request_body.text === `body ${i} `.padEnd(100, String.fromCharCode(97 + (i % 26))))).toBe(true);
    expect(j.query({ limit: 1 })[0]!.request_body.text).toBe(`body 5999 `.padEnd(100, String.fromCharCode(97 + (5999 % 26))));
  });
});

describe('HAR and curl export over the app API', () => {
  let s: TestServer;
  let recorder: http.Server;
  let recorderUrl: string;
  const seen: { method: string; url: string; headers: http.IncomingHttpHeaders; body: Buffer }[] = [];
  beforeAll(async () => {
    s = await startServer();
    recorder = http.createServer((rq, rs) => {
      const chunks: Buffer[] = [];
      rq.on('data', (c: Buffer) => chunks.push(c));
      rq.on('end', () => {
        seen.push({ method: rq.method!, url: rq.url!, headers: rq.headers, body: Buffer.concat(chunks) });
        rs.writeHead(416, { Range: '0-7', 'Content-Type': 'application/json' }).end('{"message":"416 Range Not Satisfiable"}');
      });
    });
    await new Promise<void>((r) => recorder.listen(0, '127.0.0.1', () => r()));
    recorderUrl = `http://127.0.0.1:${(recorder.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((r) => recorder.close(() => r()));
    await s.close();
  });
  const api = (p: string, o: Parameters<typeof req>[1] = {}) => req(`${s.url}/api/app/sim${p}`, { token: s.adminToken, ...o });

  it('exports the journal of a fleet as valid HAR 1.2 holding every entry', async () => {
    const start = await api('/fleet', { json: { runners: 2, builds: 4, behaviour: { update_ms: 0, poll_ms: 20, trace_kb: 1, part_kb: 0.5, artifact_kb: 2 } } });
    expect(start.status).toBe(201);
    await waitFor('the fleet to finish', async () => (await api('/fleet')).body.state === 'finished', 10_000);
    const page = await api('/journal?limit=10000');
    const har = await api('/journal.har');
    expect(har.status).toBe(200);
    expect(har.headers.get('content-disposition')).toMatch(/\.har"/);
    const log = har.body.log;
    expect(log.version).toBe('1.2');
    expect(log.creator).toEqual({ name: 'jobscope-simulator', version: expect.any(String) });
    expect(log.entries).toHaveLength(page.body.entries.length);
    expect(log.entries.length).toBeGreaterThan(20);
    for (const e of log.entries) {
      expect(Number.isNaN(Date.parse(e.startedDateTime))).toBe(false);
      expect(typeof e.time).toBe('number');
      expect(e.request).toMatchObject({ method: expect.any(String), url: expect.stringMatching(/^http:\/\//), httpVersion: 'HTTP/1.1', cookies: [], headersSize: -1 });
      expect(Array.isArray(e.request.headers) && Array.isArray(e.request.queryString)).toBe(true);
      expect(typeof e.request.bodySize).toBe('number');
      expect(e.response).toMatchObject({ status: expect.any(Number), statusText: expect.any(String), httpVersion: 'HTTP/1.1', cookies: [], redirectURL: '', headersSize: -1 });
      expect(typeof e.response.content.size).toBe('number');
      expect(typeof e.response.content.mimeType).toBe('string');
      expect(e.cache).toEqual({});
      expect(e.timings).toMatchObject({ send: expect.any(Number), wait: expect.any(Number), receive: expect.any(Number) });
    }
    const patch = log.entries.find((e: { request: { method: string } }) => e.request.method === 'PATCH');
    expect(patch.request.headers).toContainEqual({ name: 'Content-Range', value: expect.stringMatching(/^\d+-\d+$/) });
    expect(patch.request.postData.mimeType).toBe('text/plain');
    expect(patch.response.status).toBe(202);
    // Filters apply to the export too.
    const only416 = await api('/journal.har?method=PATCH&status=202');
    expect(only416.body.log.entries.every((e: { request: { method: string }; response: { status: number } }) => e.request.method === 'PATCH' && e.response.status === 202)).toBe(true);
  });

  it('gives a curl command that sends the same request again, byte for byte', async () => {
    await api('/console/use-token', { json: { runner_token: 'tok', target_url: recorderUrl } });
    // A body with ANSI escapes, quotes, a backslash and UTF-8: all must survive shell quoting.
    const body = "\x1b[32;1m$ echo 'it''s'\x1b[0;m\nback\\slash ✓ \"q\"\n";
    const sent = await api('/console/trace', { json: { body, content_range: '7-99', build_id: 12, build_token: 'bt-1' } });
    expect(sent.status).toBe(200);
    expect(sent.body.response.status).toBe(416);
    const first = seen.at(-1)!;
    // Replayable as-is only with the tokens in it, which takes an explicit opt-in.
    const curl = await api(`/journal/${sent.body.journal_id}/curl?include_secrets=1`);
    expect(curl.status).toBe(200);
    expect(curl.body.complete).toBe(true);
    expect(curl.body.curl).toMatch(/^curl -sS -i -X PATCH 'http:\/\/127\.0\.0\.1:\d+\/ci\/api\/v1\/builds\/12\/trace\.txt'/);
    const out = await run('bash', ['-c', curl.body.curl]);
    expect(out.stdout).toMatch(/^HTTP\/1\.1 416/);
    const again = seen.at(-1)!;
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(again.method).toBe(first.method);
    expect(again.url).toBe(first.url);
    expect(again.body.equals(first.body)).toBe(true);
    expect(again.body.toString('utf8')).toBe(body);
    for (const h of ['build-token', 'content-range', 'content-type', 'user-agent']) expect(again.headers[h], h).toBe(first.headers[h]);

    expect((await api('/journal/999999/curl')).status).toBe(404);
    expect((await api('/journal/abc/curl')).status).toBe(400);
  });

  it('quotes for the shell so that nothing is interpreted', async () => {
    for (const s of ["plain", "it's", '$HOME `x` "y"', '\x1b[0m\n\t✓\\']) {
      const out = await run('bash', ['-c', `printf %s ${shellQuote(s)}`]);
      expect(out.stdout).toBe(s);
    }
  });
});

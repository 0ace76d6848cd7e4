// Shared set-up for the simulator tests: a fleet against a real in-process Jobscope server.
import http from 'node:http';
import zlib from 'node:zlib';
import yauzl from 'yauzl';
import { Fleet, type RunnerGroupSpec } from '../../simulator/fleet.ts';
import { Journal } from '../../simulator/journal.ts';
import { resolveBehaviour } from '../../simulator/behaviour.ts';
import type { Behaviour, Faults } from '../../contract/simulator.ts';
import type { TestServer } from '../helpers/server.ts';
import { parseSimulateArgs, runSimulate, type SimulateDeps } from '../../simulator/cli-simulate.ts';

/** Small traces, no pauses: a build takes milliseconds, so 200 of them take seconds. */
export const FAST: Behaviour = { trace_kb: 3, part_kb: 0.75, update_ms: 0, poll_ms: 25, artifact_kb: 6 };

export function fleetOn(
  s: TestServer,
  o: { runners: number; builds: number; faults?: Faults; seed?: number; behaviour?: Behaviour; journal?: Journal; target?: string; createBuilds?: boolean; shared?: boolean },
) {
  const group: RunnerGroupSpec = {
    name: 'sim',
    count: o.runners,
    tags: [],
    runUntagged: true,
    behaviour: resolveBehaviour(FAST, o.behaviour),
    faults: o.faults ?? {},
  };
  return new Fleet({
    target: o.target ?? s.url,
    registrationToken: s.registrationToken,
    adminToken: s.adminToken,
    verify: true,
    seed: o.seed ?? 42,
    builds: o.builds,
    createBuilds: o.createBuilds ?? true,
    groups: [group],
    journal: o.journal ?? new Journal({ capacity: 20000, bodyBytes: 2048 }),
    shared: o.shared,
  });
}

/** Entry names and contents of a zip held in memory, read with yauzl (not our writer). */
export function unzip(buf: Buffer): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(buf, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err ?? new Error('no zip'));
      const out = new Map<string, Buffer>();
      zip.on('entry', (entry: yauzl.Entry) => {
        if (entry.fileName.endsWith('/')) {
          out.set(entry.fileName, Buffer.alloc(0));
          return zip.readEntry();
        }
        zip.openReadStream(entry, (e2, stream) => {
          if (e2 || !stream) return reject(e2 ?? new Error('no stream'));
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', () => {
            const data = Buffer.concat(chunks);
            // yauzl checks sizes, not checksums: a wrong CRC-32 in the archive must fail the test too.
            if (zlib.crc32(data) !== entry.crc32) return reject(new Error(`${entry.fileName}: CRC-32 ${zlib.crc32(data)} where the archive says ${entry.crc32}`));
            out.set(entry.fileName, data);
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve(out));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

export type Tamper = (req: http.IncomingMessage, body: Buffer) => { body: Buffer } | { answer: { status: number; headers: Record<string, string> } } | null;

/** A reverse proxy in front of a real Jobscope that can change trace PATCHes on their way in. */
export function proxy(upstream: string, tamper: Tamper): Promise<{ url: string; close(): Promise<void>; tampered: () => number }> {
  let count = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: Buffer = Buffer.concat(chunks);
      const isPatch = req.method === 'PATCH' && req.url!.endsWith('/trace.txt');
      const t = isPatch ? tamper(req, body) : null;
      if (t && 'answer' in t) {
        count++;
        res.writeHead(t.answer.status, t.answer.headers).end();
        return;
      }
      if (t) {
        count++;
        body = t.body;
      }
      const headers = { ...req.headers };
      delete headers['transfer-encoding'];
      headers['content-length'] = String(body.length);
      const up = http.request(upstream + req.url, { method: req.method, headers }, (ur) => {
        res.writeHead(ur.statusCode!, ur.headers);
        ur.pipe(res);
      });
      up.on('error', () => res.destroy());
      up.end(body);
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({
        url: `http://127.0.0.1:${port}`,
        tampered: () => count,
        close: () => new Promise<void>((r) => server.close(() => r())),
      });
    }),
  );
}

// Against a --target the embedded coordinator is never started: starting one would be the bug.
const noEmbedded: SimulateDeps = { startEmbedded: () => Promise.reject(new Error('no embedded coordinator when --target is given')) };

/**
 * `jobscope simulate <args>` in this process, through the command's own parse and run functions: for
 * cases about what the simulator finds and says, not about the process (spawned cases cover that).
 */
export async function simulateInProcess(args: string[], deps: SimulateDeps = noEmbedded): Promise<{ code: number; stdout: string; stderr: string }> {
  let stderr = '';
  let stdout = '';
  const write = process.stdout.write.bind(process.stdout);
  // The summary (or --json status) goes to process.stdout: catch it, as a pipeline reads it.
  process.stdout.write = ((chunk: string | Uint8Array) => ((stdout += String(chunk)), true)) as typeof process.stdout.write;
  try {
    const code = await runSimulate(parseSimulateArgs(args), deps, (t) => (stderr += t));
    return { code, stdout, stderr };
  } finally {
    process.stdout.write = write;
  }
}

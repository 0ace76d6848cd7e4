// Shared set-up for the simulator tests: a fleet against a real in-process Jobscope server.
import yauzl from 'yauzl';
import { Fleet, type RunnerGroupSpec } from '../../server/simulator/fleet.ts';
import { Journal } from '../../server/simulator/journal.ts';
import { resolveBehaviour } from '../../server/simulator/behaviour.ts';
import type { Behaviour, Faults } from '../../server/contract/simulator.ts';
import type { TestServer } from '../helpers/server.ts';

/** Small traces, no pauses: a build takes milliseconds, so 200 of them take seconds. */
export const FAST: Behaviour = { trace_kb: 3, part_kb: 0.75, update_ms: 0, poll_ms: 25, artifact_kb: 6 };

export function fleetOn(s: TestServer, o: { runners: number; builds: number; faults?: Faults; seed?: number; behaviour?: Behaviour; journal?: Journal }) {
  const group: RunnerGroupSpec = {
    name: 'sim',
    count: o.runners,
    tags: [],
    runUntagged: true,
    behaviour: resolveBehaviour(FAST, o.behaviour),
    faults: o.faults ?? {},
  };
  return new Fleet({
    target: s.url,
    registrationToken: s.registrationToken,
    adminToken: s.adminToken,
    verify: true,
    seed: o.seed ?? 42,
    builds: o.builds,
    createBuilds: true,
    groups: [group],
    journal: o.journal ?? new Journal({ capacity: 20000, bodyBytes: 2048 }),
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
            out.set(entry.fileName, Buffer.concat(chunks));
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

// Same seed, same run: the job log and the artifacts archive depend only on their inputs and the seed.
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { jobLog, type JobLogInput } from '../../simulator/job-log.ts';
import { archiveDigest } from '../../simulator/artifact.ts';
import { Prng } from '../../common/prng.ts';
import { unzip } from './support.ts';
import { archiveStream } from '../../simulator/artifact.ts';

const input: JobLogInput = {
  buildId: 7, projectId: 1, sha: 'abcdef0123456789', ref: 'main', commands: 'echo "hi"\nnpm test\nmake', runnerName: 'sim-1',
  runnerToken: '0123456789abcdef', host: 'box', targetBytes: 8192, fails: false, artifacts: { name: 'a', bytes: 1000 },
};

describe('seeded output', () => {
  it('gives the same job log for the same seed, another for another seed, close to the asked size', () => {
    const a = jobLog(input, new Prng(1));
    expect(jobLog(input, new Prng(1)).equals(a)).toBe(true);
    expect(jobLog(input, new Prng(2)).equals(a)).toBe(false);
    expect(a.length).toBeLessThanOrEqual(8192);
    expect(a.length).toBeGreaterThan(7000);
    const text = a.toString('utf8');
    expect(text).toContain('\x1b[32;1mChecking out abcdef01 as main...\x1b[0;m\n');
    expect(text).toContain('\x1b[32;1m$ echo "hi"\x1b[0;m\nhi\n');
    const failed = jobLog({ ...input, fails: true }, new Prng(1)).toString('utf8');
    expect(failed).toContain('\x1b[31;1mERROR: Build failed: exit status 1');
    expect(failed).not.toContain('Build succeeded');
  });

  it('gives the same archive bytes for the same build and seed, of about the asked size', async () => {
    const spec = { seed: 9, bytes: 40_000, text: 'hello\n' };
    const a = await archiveDigest(spec);
    expect(await archiveDigest(spec)).toEqual(a);
    expect((await archiveDigest({ ...spec, seed: 10 })).sha256).not.toBe(a.sha256);
    expect(Math.abs(a.size - 40_000)).toBeLessThan(600);
    const chunks: Buffer[] = [];
    for await (const c of archiveStream(spec)) chunks.push(c as Buffer);
    const zip = Buffer.concat(chunks);
    expect(crypto.createHash('sha256').update(zip).digest('hex')).toBe(a.sha256);
    const files = await unzip(zip);
    expect(files.get('out/result.txt')!.toString()).toBe('hello\n');
  });

  it('keeps a small data.bin for the next build of the seed, and streams a large one from the same noise', async () => {
    const zipOf = (spec: { seed: number; bytes: number; text: string }) => Buffer.concat([...archiveStream(spec)]);
    const one = await unzip(zipOf({ seed: 4, bytes: 100_000, text: 'artifacts of build 1 by sim-1\n' }));
    const two = zipOf({ seed: 4, bytes: 100_000, text: 'artifacts of build 2 by sim-1\n' });
    // Another build's archive: its own result.txt, the same data.bin (kept, not made again).
    expect(crypto.createHash('sha256').update(two).digest('hex')).not.toBe((await archiveDigest({ seed: 4, bytes: 100_000, text: 'artifacts of build 1 by sim-1\n' })).sha256);
    const twoFiles = await unzip(two);
    expect(twoFiles.get('out/result.txt')!.toString()).toBe('artifacts of build 2 by sim-1\n');
    expect(twoFiles.get('out/data.bin')!.equals(one.get('out/data.bin')!)).toBe(true);
    // Above the kept size, data.bin is streamed: the same noise from the same seed, so its start is the small one's.
    const big = await unzip(zipOf({ seed: 4, bytes: 1_500_000, text: 'big\n' }));
    const small = one.get('out/data.bin')!;
    expect(big.get('out/data.bin')!.length).toBeGreaterThan(1_400_000);
    expect(big.get('out/data.bin')!.subarray(0, small.length).equals(small)).toBe(true);
    expect((await unzip(zipOf({ seed: 5, bytes: 100_000, text: 'x\n' }))).get('out/data.bin')!.equals(small)).toBe(false);
  });

  it('draws the same numbers from the same seed', () => {
    const a = new Prng(5);
    const b = new Prng(5);
    const xs = Array.from({ length: 50 }, () => a.next());
    expect(Array.from({ length: 50 }, () => b.next())).toEqual(xs);
    expect(new Set(xs).size).toBe(50);
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
  });
});

// The artifacts archive a virtual runner uploads: a real zip (yazl) holding out/result.txt and an
// incompressible out/data.bin that brings it to the requested size. Generated as a stream so a
// large archive never sits whole in memory; the same build and seed give the same bytes, which
// is what lets an upload be retried and its sha256 be compared after the round trip.
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import yazl from 'yazl';

export interface ArchiveSpec {
  buildId: number;
  seed: number;
  bytes: number;
  text: string;
}

const MTIME = new Date(Date.UTC(2026, 0, 1));

/** Deterministic pseudo-random bytes: AES-128-CTR over zeros, keyed by the seed. */
function noise(seed: number, buildId: number, bytes: number): Readable {
  const key = crypto.createHash('sha256').update(`jobscope-artifact:${seed}:${buildId}`).digest();
  const cipher = crypto.createCipheriv('aes-128-ctr', key.subarray(0, 16), key.subarray(16, 32));
  const zeros = Buffer.alloc(64 * 1024);
  let left = bytes;
  return new Readable({
    read() {
      if (left <= 0) return void this.push(null);
      const n = Math.min(left, zeros.length);
      left -= n;
      this.push(cipher.update(zeros.subarray(0, n)));
    },
  });
}

/** Zip overhead for the two entries and a directory, so data.bin can be sized to hit the target. */
const OVERHEAD = 400;

export function archiveStream(spec: ArchiveSpec): Readable {
  const zip = new yazl.ZipFile();
  zip.addEmptyDirectory('out/', { mtime: MTIME });
  zip.addBuffer(Buffer.from(spec.text, 'utf8'), 'out/result.txt', { mtime: MTIME, compress: false });
  const dataBytes = Math.max(0, spec.bytes - OVERHEAD - Buffer.byteLength(spec.text));
  zip.addReadStream(noise(spec.seed, spec.buildId, dataBytes), 'out/data.bin', { mtime: MTIME, compress: false, size: dataBytes });
  zip.end();
  return zip.outputStream as unknown as Readable;
}

/** The archive's sha256 and size without keeping it (used by the console and the bench's reference). */
export async function archiveDigest(spec: ArchiveSpec): Promise<{ sha256: string; size: number }> {
  const hash = crypto.createHash('sha256');
  let size = 0;
  for await (const chunk of archiveStream(spec)) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), size };
}

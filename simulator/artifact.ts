// The artifacts archive a virtual runner uploads: a real zip holding out/, out/result.txt (which
// names the build and the runner) and an incompressible out/data.bin that brings it to the requested
// size. Generated piece by piece so a large archive never sits whole in memory; the same build and
// seed give the same bytes, which is what lets an upload be retried and its sha256 be compared after
// the round trip. data.bin depends on the seed and its size only, as a build's big outputs often
// repeat the last build's: a small one (the fleet's default 64 KiB) is made and checksummed once, not
// per build (AES-CTR and CRC-32 were ~85 µs of the simulator's ~2 ms of own CPU a build).
// Written here rather than with yazl: every entry is stored (nothing to compress), and yazl's
// JavaScript crc32 and four piped streams per entry cost about 1 ms a 64 KiB archive, a tenth of
// what the simulator itself spends per build; zlib.crc32 is native (Node 20.15 and later: package.json's engines).
import crypto from 'node:crypto';
import zlib from 'node:zlib';

export interface ArchiveSpec {
  seed: number;
  bytes: number;
  text: string;
}

const PIECE = 64 * 1024;
const ZEROS = Buffer.alloc(PIECE);
// 2026-01-01 00:00:00 as an MS-DOS date and time (fixed, so the bytes depend only on the spec).
const DOS_TIME = 0;
const DOS_DATE = ((2026 - 1980) << 9) | (1 << 5) | 1;
const UTF8_NAMES = 0x0800;
const DATA_DESCRIPTOR = 0x0008;

interface Entry {
  name: Buffer;
  flags: number;
  crc: number;
  size: number;
  offset: number;
  mode: number;
}

/** Deterministic pseudo-random bytes: AES-128-CTR over zeros, keyed by the seed. */
function* noise(seed: number, bytes: number): Generator<Buffer> {
  const key = crypto.createHash('sha256').update(`jobscope-artifact:${seed}`).digest();
  const cipher = crypto.createCipheriv('aes-128-ctr', key.subarray(0, 16), key.subarray(16, 32));
  for (let left = bytes; left > 0; left -= PIECE) yield cipher.update(ZEROS.subarray(0, Math.min(left, PIECE)));
}

/**
 * data.bin up to KEEP_DATA is kept, with its CRC, for the next archive of the same seed (each runner
 * has its own) and size; all kept together stay under KEPT_BYTES, the oldest forgotten first. A fleet
 * of 20 runners with the default 64 KiB keeps 1.3 MiB.
 */
const KEEP_DATA = 1024 * 1024;
const KEPT_BYTES = 16 * 1024 * 1024;
const kept = new Map<string, { pieces: Buffer[]; crc: number; bytes: number }>();
let keptBytes = 0;

function keptData(seed: number, bytes: number): { pieces: Buffer[]; crc: number } {
  const key = `${seed}:${bytes}`;
  let d = kept.get(key);
  if (!d) {
    const pieces = [...noise(seed, bytes)];
    d = { pieces, crc: pieces.reduce((crc, p) => zlib.crc32(p, crc), 0), bytes };
    for (const [k, old] of kept) {
      if (keptBytes + bytes <= KEPT_BYTES) break;
      kept.delete(k);
      keptBytes -= old.bytes;
    }
    kept.set(key, d);
    keptBytes += bytes;
  }
  return d;
}

function localHeader(e: Entry): Buffer {
  const b = Buffer.alloc(30 + e.name.length);
  b.writeUInt32LE(0x04034b50, 0);
  b.writeUInt16LE(20, 4);
  b.writeUInt16LE(e.flags, 6);
  b.writeUInt16LE(0, 8); // stored
  b.writeUInt16LE(DOS_TIME, 10);
  b.writeUInt16LE(DOS_DATE, 12);
  // With a data descriptor the CRC and sizes follow the data (they are zero here).
  const known = (e.flags & DATA_DESCRIPTOR) === 0;
  b.writeUInt32LE(known ? e.crc : 0, 14);
  b.writeUInt32LE(known ? e.size : 0, 18);
  b.writeUInt32LE(known ? e.size : 0, 22);
  b.writeUInt16LE(e.name.length, 26);
  b.writeUInt16LE(0, 28);
  e.name.copy(b, 30);
  return b;
}

function dataDescriptor(e: Entry): Buffer {
  const b = Buffer.alloc(16);
  b.writeUInt32LE(0x08074b50, 0);
  b.writeUInt32LE(e.crc, 4);
  b.writeUInt32LE(e.size, 8);
  b.writeUInt32LE(e.size, 12);
  return b;
}

function centralDirectory(entries: Entry[], start: number): Buffer {
  const parts = entries.map((e) => {
    const b = Buffer.alloc(46 + e.name.length);
    b.writeUInt32LE(0x02014b50, 0);
    b.writeUInt16LE((3 << 8) | 20, 4); // made by: Unix, zip 2.0 (so the mode below is read)
    b.writeUInt16LE(20, 6);
    b.writeUInt16LE(e.flags, 8);
    b.writeUInt16LE(0, 10);
    b.writeUInt16LE(DOS_TIME, 12);
    b.writeUInt16LE(DOS_DATE, 14);
    b.writeUInt32LE(e.crc, 16);
    b.writeUInt32LE(e.size, 20);
    b.writeUInt32LE(e.size, 24);
    b.writeUInt16LE(e.name.length, 28);
    b.writeUInt32LE(e.mode * 0x10000, 38);
    b.writeUInt32LE(e.offset, 42);
    e.name.copy(b, 46);
    return b;
  });
  const size = parts.reduce((n, p) => n + p.length, 0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(size, 12);
  end.writeUInt32LE(start, 16);
  return Buffer.concat([...parts, end]);
}

/** Zip overhead for the three entries and the directory, so data.bin can be sized to hit the target. */
const OVERHEAD = 320;
/** Pieces smaller than this are sent together with what follows (fewer chunks on the wire). */
const SMALL = 16 * 1024;

/**
 * The archive in pieces of at most 64 KiB (a sync generator: nothing to wait for, and the uploader
 * awaits the socket between pieces). Below 4 GiB, as `artifact_kb` is (at most 1 GiB): no Zip64.
 */
export function* archiveStream(spec: ArchiveSpec): Generator<Buffer> {
  const text = Buffer.from(spec.text, 'utf8');
  const dataBytes = Math.max(0, spec.bytes - OVERHEAD - text.length);
  const entries: Entry[] = [];
  let offset = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const add = (b: Buffer) => {
    pending.push(b);
    pendingBytes += b.length;
    offset += b.length;
  };
  const take = () => {
    const out = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes);
    pending = [];
    pendingBytes = 0;
    return out;
  };

  const dir: Entry = { name: Buffer.from('out/'), flags: UTF8_NAMES, crc: 0, size: 0, offset, mode: 0o40775 };
  entries.push(dir);
  add(localHeader(dir));
  const result: Entry = { name: Buffer.from('out/result.txt'), flags: UTF8_NAMES, crc: zlib.crc32(text), size: text.length, offset, mode: 0o100664 };
  entries.push(result);
  add(localHeader(result));
  add(text);
  const data: Entry = { name: Buffer.from('out/data.bin'), flags: UTF8_NAMES | DATA_DESCRIPTOR, crc: 0, size: dataBytes, offset, mode: 0o100664 };
  entries.push(data);
  add(localHeader(data));
  // The CRC is needed only after the data (data descriptor, central directory).
  const d = dataBytes <= KEEP_DATA ? keptData(spec.seed, dataBytes) : undefined;
  for (const piece of d ? d.pieces : noise(spec.seed, dataBytes)) {
    if (!d) data.crc = zlib.crc32(piece, data.crc);
    add(piece);
    if (pendingBytes >= SMALL) yield take();
  }
  if (d) data.crc = d.crc;
  add(dataDescriptor(data));
  add(centralDirectory(entries, offset));
  yield take();
}

/** The archive's sha256 and size without keeping it (used by the console and the bench's reference). */
export async function archiveDigest(spec: ArchiveSpec): Promise<{ sha256: string; size: number }> {
  const hash = crypto.createHash('sha256');
  let size = 0;
  for (const chunk of archiveStream(spec)) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { sha256: hash.digest('hex'), size };
}

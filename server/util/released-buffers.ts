// Transfer buffers given back as soon as they are written, not left to the garbage collector.
// Why: V8 counts an ArrayBuffer's memory as external memory until a scavenge finds it dead, and it
// scavenges for external memory only every 32 MiB of young backing stores; meanwhile every byte of
// external memory allocated since the last mark-compact counts against the old generation's limit.
// A server that has idled has had that limit set (V8's memory reducer) to its live heap plus ~9 MB,
// so every ~9 MB of dead 64 KiB upload chunks or 1 MiB download reads started a full mark-compact:
// 9-15 per 256 MiB uploaded, 7-10 per 256 MiB downloaded (--trace-gc), which bound both transfers.
// The bare node:http references never had a mark-compact, so their limit was still V8's large
// initial one. Transferring a buffer to a closed MessagePort detaches it: its memory is freed and
// V8's external count lowered at once, and nothing is posted (the transfer list is detached even
// when the port is closed: node's MessagePort::PostMessage serializes before it checks the port).
import type { Readable } from 'node:stream';
import { MessageChannel, type MessagePort } from 'node:worker_threads';

// Made on the first transfer, not at start: a server that never sees an artifact pays nothing.
let closedPort: MessagePort | undefined;
function portToNowhere(): MessagePort {
  if (!closedPort) {
    const { port1, port2 } = new MessageChannel();
    port1.close();
    port2.close();
    closedPort = port1;
  }
  return closedPort;
}

/** Below this a chunk is not worth a transfer (a runner's pieces are ~32 KiB); busboy's boundary lookbehind (under 80 bytes) is never touched. */
const RELEASE_MIN = 4 * 1024;

/**
 * Detaches every buffer of `bufs` that is the whole of an ArrayBuffer of at least RELEASE_MIN bytes.
 * The caller vouches that nothing else reads those ArrayBuffers any more; a view of part of one
 * (a pooled or shared allocation, whose rest may be someone else's) is always left alone.
 */
export function release(bufs: readonly Buffer[]): void {
  const whole = new Set<ArrayBuffer>();
  for (const b of bufs) {
    if (b.byteOffset === 0 && b.byteLength === b.buffer.byteLength && b.byteLength >= RELEASE_MIN && b.buffer instanceof ArrayBuffer) whole.add(b.buffer);
  }
  if (whole.size > 0) portToNowhere().postMessage(null, [...whole]);
}

/**
 * Upload sources whose chunks nothing else holds once written: the HTTP parser copies every piece of
 * a request body into an ArrayBuffer of its own (node_http_parser.cc, Buffer::Copy) and busboy hands
 * on views of those. Marked by the route, which knows where the chunks come from, rather than assumed
 * for every source: a caller streaming buffers it still uses must not see them emptied.
 */
const releasableSources = new WeakSet<Readable>();
export function releaseChunksAfterWrite(source: Readable): void {
  releasableSources.add(source);
}
export function chunksReleasable(source: Readable): boolean {
  return releasableSources.has(source);
}

/** The ArrayBuffers an archive's read stream handed out, each a fresh read of its own (fs.ReadStream allocates one per read). */
const archiveReads = new WeakSet<ArrayBufferLike>();
export function markArchiveRead(chunk: unknown): void {
  if (Buffer.isBuffer(chunk)) archiveReads.add(chunk.buffer);
}
/** Gives a download's chunk back once the socket has written it: only a chunk an archive's read stream made. */
export function releaseArchiveChunk(chunk: unknown): void {
  if (Buffer.isBuffer(chunk) && archiveReads.has(chunk.buffer)) release([chunk]);
}

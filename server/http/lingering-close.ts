// Closing a socket that still has unread bytes in it makes the kernel answer with a reset, and a
// reset can overtake the answer we just wrote: a runner still sending a big artifact then reads
// EPIPE/ECONNRESET instead of the 413/507 that says what to do. Web servers close such connections
// "lingeringly" (nginx's lingering_close, Apache's lingering_close): end our side, keep reading and
// dropping what still arrives, and let go when the client stops or a deadline passes. Node has no
// option for it, so it is done here, for the one case that needs it: an answer with
// Connection: close given while the request body is still coming.
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/**
 * After the answer to `raw` is written, node calls the socket's destroySoon() for a Connection: close
 * answer, which destroys the socket with the body's rest unread. Replace it, for this socket only,
 * with an end() that keeps reading (into nothing) for at most `lingerMs`.
 */
export function closeLingeringly(raw: IncomingMessage, lingerMs: number): void {
  const socket = raw.socket as Socket & { destroySoon?: () => void };
  if (!socket || socket.destroyed) return;
  // Whoever read the body has given up; what still comes is read and dropped so the client can finish.
  raw.on('data', () => undefined);
  raw.resume();
  if (lingerMs <= 0) return;
  socket.destroySoon = () => {
    socket.end();
    const deadline = setTimeout(() => socket.destroy(), lingerMs);
    deadline.unref();
    socket.once('close', () => clearTimeout(deadline));
  };
}

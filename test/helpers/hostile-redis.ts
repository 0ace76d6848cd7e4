// A hostile "Redis" for a test: a node net server that speaks enough RESP to pass a client's
// handshake (+OK to CLIENT, SELECT, AUTH), then answers every other command as told:
// - 'huge-array': announces 2^31 elements and keeps sending small ones;
// - 'huge-bulk':  announces a 600 MB string and keeps sending its bytes;
// - 'frozen':     never answers.
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export type Hostility = 'huge-array' | 'huge-bulk' | 'frozen';

export interface HostileRedis {
  url: string;
  /** Bytes written to clients so far. */
  sent(): number;
  close(): Promise<void>;
}

/** Command names in a chunk of RESP requests (arrays of bulk strings); a partial command at the end is ignored. */
function commands(buf: string): string[] {
  const out: string[] = [];
  for (const m of buf.matchAll(/\*\d+\r\n\$\d+\r\n([A-Za-z]+)\r\n/g)) out.push(m[1]!.toUpperCase());
  return out;
}

const CHUNK = Buffer.from('$1\r\nx\r\n'.repeat(8192));

/** `floodBytes`: most bytes flooded per connection (a bench against unbounded code keeps the machine alive). */
export async function startHostileRedis(mode: Hostility, floodBytes = Infinity): Promise<HostileRedis> {
  let sent = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((sock) => {
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
    sock.on('error', () => {});
    let hostile = false;
    const flood = (head: string, body: Buffer) => {
      sock.write(head);
      let flooded = 0;
      const more = () => {
        // Until the client hangs up: what a real attack does.
        while (!sock.destroyed && flooded < floodBytes) {
          flooded += body.length;
          sent += body.length;
          if (!sock.write(body)) return;
        }
      };
      sock.on('drain', more);
      more();
    };
    sock.on('data', (d) => {
      for (const cmd of commands(d.toString('latin1'))) {
        if (hostile) return;
        if (cmd === 'CLIENT' || cmd === 'SELECT' || cmd === 'AUTH') {
          sock.write('+OK\r\n');
          continue;
        }
        hostile = true;
        if (mode === 'huge-array') flood('*2147483648\r\n', CHUNK);
        else if (mode === 'huge-bulk') flood('$600000000\r\n', Buffer.alloc(64 * 1024, 120));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}/0`,
    sent: () => sent,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

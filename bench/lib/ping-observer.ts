// Another client of a Redis, as a production app is: a PING every 2 ms over a raw socket for --ms
// milliseconds; prints every round trip, in ms, as a JSON array. Sent on schedule whether or not the previous
// one was answered, each timed from its write: a client that waited for each answer before the
// next would time one PING through a 2-second stall instead of the thousand a real app's requests
// would have been (coordinated omission). Run as its own process so what it measures is
// Redis's answer time, not the bench process's event loop.
//   node --import tsx bench/lib/ping-observer.ts <port> <ms>
import net from 'node:net';

const [port, ms] = process.argv.slice(2).map(Number) as [number, number];
const EVERY_MS = 2;
const sock = net.connect(port, '127.0.0.1');
await new Promise<void>((resolve, reject) => sock.once('connect', resolve).once('error', reject));
sock.setNoDelay(true);
const lat: number[] = [];
/** When each PING unanswered yet was written. */
const due: number[] = [];
let head = 0;
sock.on('data', (d: Buffer) => {
  const now = performance.now();
  // Each answer is "+PONG\r\n": one per LF.
  for (let i = d.indexOf(10); i >= 0; i = d.indexOf(10, i + 1)) lat.push(now - due[head++]!);
});
const start = performance.now();
let n = 0;
await new Promise<void>((resolve) => {
  const timer = setInterval(() => {
    const now = performance.now();
    while (start + n * EVERY_MS <= now && n * EVERY_MS < ms) {
      due.push(performance.now());
      sock.write('PING\r\n');
      n++;
    }
    if (n * EVERY_MS >= ms) {
      clearInterval(timer);
      resolve();
    }
  }, EVERY_MS);
});
while (head < due.length) await new Promise((r) => setTimeout(r, 5));
sock.destroy();
process.stdout.write(JSON.stringify(lat.map((x) => Math.round(x * 1000) / 1000)) + '\n');

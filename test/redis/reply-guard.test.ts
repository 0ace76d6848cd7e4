// The RESP header scanner in front of every Redis client (server/redis/reply-guard.ts): normal
// replies of every type, however the socket cuts them, pass and each reply is counted alone (a
// miscounted end would add replies up until a long-lived connection was dropped for nothing);
// a reply past either bound is refused as soon as its header, or its bytes, say so.
import { expect, it } from 'vitest';
import { ReplyScanner } from '../../server/redis/reply-guard.ts';

const bulk = (s: string) => `$${Buffer.byteLength(s)}\r\n${s}\r\n`;
const REPLIES = [
  '+OK\r\n',
  '-ERR wrong\r\n',
  ':42\r\n',
  '$-1\r\n',
  '*-1\r\n',
  '*0\r\n',
  bulk(''),
  bulk('héllo\r\nwith CRLF inside'),
  `*3\r\n${bulk('a')}:1\r\n*2\r\n${bulk('b')}$-1\r\n`,
  `*2\r\n${bulk('0')}*4\r\n${bulk('q1')}${bulk('q2')}${bulk('q3')}${bulk('x'.repeat(900))}`,
];
const BOUNDS = { maxBytes: 2000, maxElements: 10 };

/** Cuts `buf` at pseudo-random points (1 to 40 bytes apart): inside headers, CRLFs and bodies. */
function cuts(buf: Buffer, seed: number): Buffer[] {
  const out: Buffer[] = [];
  let x = seed;
  for (let o = 0; o < buf.length; ) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    const n = 1 + (x % 40);
    out.push(buf.subarray(o, o + n));
    o += n;
  }
  return out;
}

it('passes a long stream of normal replies cut anywhere: each reply is bounded alone', () => {
  // ~1,000 replies, 170 KB in all: far past both bounds if replies were added up.
  const stream = Buffer.from(Array.from({ length: 100 }, () => REPLIES.join('')).join(''));
  for (const seed of [1, 2, 3, 4, 5]) {
    const s = new ReplyScanner(BOUNDS);
    for (const c of cuts(stream, seed)) expect(s.feed(c)).toBeNull();
  }
  const whole = new ReplyScanner(BOUNDS);
  expect(whole.feed(stream)).toBeNull();
});

it('refuses at the header: too many elements announced, nested ones counted in; a bulk longer than the bound', () => {
  expect(new ReplyScanner(BOUNDS).feed(Buffer.from('*2147483648\r\n'))?.message).toBe('a Redis reply announced 2147483648 elements, past the bound of 10 (--redis-max-reply-elements raises it)');
  expect(new ReplyScanner(BOUNDS).feed(Buffer.from(`*5\r\n*6\r\n`))?.message).toMatch(/announced 11 elements/);
  const s = new ReplyScanner(BOUNDS);
  expect(s.feed(Buffer.from('$6000'))).toBeNull(); // the header is not whole yet
  expect(s.feed(Buffer.from('00000\r\n'))?.message).toBe('a Redis reply of more than 572.2 MiB was refused: the bound is 0 MiB (--redis-max-reply-mb raises it)');
});

it('refuses when the bytes of one reply pass the bound, and a line that never ends', () => {
  const s = new ReplyScanner(BOUNDS);
  expect(s.feed(Buffer.from(`*9\r\n${bulk('x'.repeat(900))}${bulk('y'.repeat(900))}`))).toBeNull();
  expect(s.feed(Buffer.from(bulk('z'.repeat(900))))?.message).toMatch(/^a Redis reply of more than/);
  const line = new ReplyScanner(BOUNDS);
  expect(line.feed(Buffer.from('+' + 'a'.repeat(1500)))).toBeNull();
  expect(line.feed(Buffer.from('a'.repeat(600)))?.message).toMatch(/^a Redis reply of more than/);
});

// Which addresses a server may bind, and which of them keep it on this machine. A bind address
// saved from the UI is checked here, so that it can neither fail the next start nor quietly open
// the server to the network.
import net from 'node:net';
import os from 'node:os';

/**
 * Loopback names and addresses (`localhost`, 127.0.0.0/8, `::1`, brackets allowed): only this machine
 * can connect. The one definition the bind check, the Host check and the token warnings share.
 */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || (net.isIPv4(h) && h.startsWith('127.'));
}

/** Why this machine cannot bind `host`, or null when it can (loopback, a wildcard or one of its interfaces). */
export function unbindableHostProblem(host: string): string | null {
  const h = host.trim().toLowerCase().replace(/^\[|\]$/g, '');
  if (!h) return 'empty';
  if (isLoopbackHost(h) || h === '0.0.0.0' || h === '::') return null;
  const mine = Object.values(os.networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address.toLowerCase()));
  if (mine.includes(h)) return null;
  return `"${host}" is not an address of this machine (binding it would fail); use 127.0.0.1, 0.0.0.0 or one of: ${[...new Set(mine)].join(', ')}`;
}

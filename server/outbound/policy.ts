// Which hosts this server may call on someone's behalf (the runner console and fleets, GitLab and
// Sidekiq connections). An admin-token holder chooses those targets and reads the answers back, so
// on a server other machines reach they are a way into its network: like GitLab's "allow requests
// to the local network" (off by default), a server bound to anything but loopback refuses this
// machine's own addresses (loopback, unspecified, its interfaces), link-local and the cloud metadata
// addresses unless --outbound-allow lists them. Bound to loopback (the desktop), everything is allowed
// by default: the network is the user's own.
//
// A host name is resolved and every address is checked, and the connection is made to a checked
// address (`lookup`, handed to net/http), so a name that answers differently the second time (DNS
// rebinding) cannot slip past.
import dns from 'node:dns';
import net from 'node:net';
import os from 'node:os';
import type { LookupFunction } from 'node:net';
import { isLoopbackHost } from '../host-address.ts';

export const OUTBOUND_SETTING = '--outbound-allow (JOBSCOPE_OUTBOUND_ALLOW, outboundAllow in settings.json)';

/** The message of a refused target; never says whether anything listens there. */
export class OutboundRefused extends Error {
  readonly code = 'EOUTBOUND';
  constructor(host: string, address: string | null, bound: string) {
    const what = address && address !== host ? `${host} (${address})` : host;
    super(
      `${what} is refused by the outbound policy: this server listens on ${bound}, so loopback, link-local, cloud-metadata and this machine's own addresses are not called; ` +
        `list the host or its network in ${OUTBOUND_SETTING} to allow it`,
    );
  }
}

export interface OutboundPolicy {
  /** True when every host is allowed (nothing is checked). */
  readonly open: boolean;
  /** Resolves `host` and checks every address; rejects with OutboundRefused. */
  check(host: string): Promise<void>;
  /** For net.connect / http.request: the same check on the addresses actually connected to. */
  readonly lookup: LookupFunction;
  /** Whether one address (no resolution) may be called; for tests and the connect path. */
  allows(host: string, address: string): boolean;
}

/** An IPv4 address written as IPv6 (::ffff:127.0.0.1, ::ffff:7f00:1) as IPv4; anything else unchanged. */
function unmapped(address: string): string {
  const a = address.toLowerCase().replace(/^\[|\]$/g, '');
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (dotted) return dotted[1]!;
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(a);
  if (hex) {
    const hi = parseInt(hex[1]!, 16);
    const lo = parseInt(hex[2]!, 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return a;
}

function add(list: net.BlockList, entry: string): void {
  const [addr, bits] = entry.split('/');
  const family = net.isIPv6(addr!) ? 'ipv6' : 'ipv4';
  if (bits === undefined) list.addAddress(addr!, family);
  else list.addSubnet(addr!, Number(bits), family);
}

const has = (list: net.BlockList, address: string) => list.check(address, net.isIPv6(address) ? 'ipv6' : 'ipv4');

const DENIED = ['127.0.0.0/8', '0.0.0.0/8', '169.254.0.0/16', '::1/128', '::/128', 'fe80::/10', 'fd00:ec2::254/128'];

/** Why an --outbound-allow value cannot be used, or null. */
export function outboundAllowProblem(raw: string): string | null {
  for (const entry of entriesOf(raw)) {
    if (entry === '*') continue;
    const [addr, bits, extra] = entry.split('/');
    if (extra !== undefined) return `"${entry}" is not a host, an address or a network (address/bits)`;
    if (bits !== undefined) {
      const max = net.isIPv4(addr!) ? 32 : net.isIPv6(addr!) ? 128 : -1;
      if (max < 0 || !/^\d{1,3}$/.test(bits) || Number(bits) > max) return `"${entry}" is not a network: write it like 10.0.0.0/8 or fd00::/8`;
    } else if (!net.isIP(addr!) && !/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/i.test(addr!)) {
      return `"${entry}" is not a host name, an address or a network`;
    }
  }
  return null;
}

function entriesOf(raw: string): string[] {
  return raw
    .split(/[\s,]+/)
    .map((e) => e.trim().toLowerCase().replace(/^\[|\]$/g, ''))
    .filter(Boolean);
}

/**
 * The policy for a server bound to `bindHost` with the --outbound-allow value `allow` (undefined:
 * the default; "*": everything; otherwise host names, addresses and networks exempt from the refusal).
 */
export function outboundPolicy(bindHost: string, allow: string | undefined): OutboundPolicy {
  const everything = allow === undefined ? isLoopbackHost(bindHost) : entriesOf(allow).includes('*');
  const names = new Set<string>();
  const allowed = new net.BlockList();
  for (const e of allow === undefined ? [] : entriesOf(allow)) {
    if (e === '*') continue;
    const addr = e.split('/')[0]!;
    if (net.isIP(addr)) add(allowed, e);
    else names.add(e.replace(/\.$/, ''));
  }
  const denied = new net.BlockList();
  for (const e of DENIED) add(denied, e);
  // This machine's own addresses reach the services that listen on all interfaces.
  for (const i of Object.values(os.networkInterfaces()).flat()) if (i) add(denied, i.address.split('%')[0]!);

  const allows = (host: string, address: string): boolean => {
    if (everything) return true;
    const h = host.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
    if (names.has(h)) return true;
    const a = unmapped(address);
    if (!net.isIP(a)) return false;
    return has(allowed, a) || !has(denied, a);
  };

  async function addresses(host: string): Promise<string[]> {
    const h = host.replace(/^\[|\]$/g, '');
    if (net.isIP(h)) return [h];
    return (await dns.promises.lookup(h, { all: true, verbatim: true })).map((r) => r.address);
  }

  const bound = bindHost;
  return {
    open: everything,
    allows,
    async check(host: string): Promise<void> {
      if (everything) return;
      const h = host.replace(/^\[|\]$/g, '');
      if (names.has(h.toLowerCase().replace(/\.$/, ''))) return;
      // An unknown name is refused too: otherwise "not found" versus "refused" tells what exists inside.
      const list = await addresses(h).catch(() => [] as string[]);
      if (list.length === 0) throw new OutboundRefused(h, null, bound);
      for (const a of list) if (!allows(h, a)) throw new OutboundRefused(h, a, bound);
    },
    lookup: ((hostname: string, options: dns.LookupOptions, callback: (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void) => {
      dns.lookup(hostname, { ...options, all: true }, (err, list) => {
        if (err) return callback(err, '', 0);
        const refused = list.find((r) => !allows(hostname, r.address));
        if (refused) return callback(new OutboundRefused(hostname, refused.address, bound) as NodeJS.ErrnoException, '', 0);
        if (options.all) return callback(null, list);
        callback(null, list[0]!.address, list[0]!.family);
      });
    }) as LookupFunction,
  };
}

const byConfig = new WeakMap<object, OutboundPolicy>();

/** One policy per server config (the config object is the server's). */
export function policyOf(config: { host: string; outboundAllow?: string }): OutboundPolicy {
  let p = byConfig.get(config);
  if (!p) byConfig.set(config, (p = outboundPolicy(config.host, config.outboundAllow)));
  return p;
}

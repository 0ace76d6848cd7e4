// The outbound policy as a route answers it: a target the policy refuses is a 403 naming the field
// and the setting, before anything is sent there.
import { forbidden } from '../http/errors.ts';
import { OutboundRefused, type OutboundPolicy } from './policy.ts';

/** Throws a 403 when `url`'s host may not be called; nothing is connected to either way. */
export async function refuseOutbound(policy: OutboundPolicy, field: string, url: string): Promise<void> {
  if (policy.open) return;
  try {
    await policy.check(new URL(url).hostname);
  } catch (err) {
    if (err instanceof OutboundRefused) throw forbidden(`${field}: ${err.message}`);
    throw err;
  }
}

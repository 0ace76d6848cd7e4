// A hostile RESP server (test/helpers/hostile-redis.ts) in its own process, so its flood does not
// run on the event loop being measured. Prints its URL, runs until killed.
//   node --import tsx bench/lib/hostile-redis-server.ts <huge-array|huge-bulk|frozen> [flood bytes per connection]
import { startHostileRedis, type Hostility } from '../../test/helpers/hostile-redis.ts';

const [mode, flood] = process.argv.slice(2);
const h = await startHostileRedis(mode as Hostility, flood ? Number(flood) : Infinity);
process.stdout.write(`${h.url}\n`);

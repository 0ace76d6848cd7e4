// The headless host: start the server, print where it listens, stop cleanly on SIGTERM/SIGINT.
import type { Config } from '../server/config.ts';
import { ServerHost } from './server-host.ts';
import { DataDirInUseError } from '../server/store/files/data-dir.ts';
import { signInLink } from './sign-in.ts';
import { connectionCaps, type ConnectionCaps } from '../server/http/connection-caps.ts';
import { whenParentGone } from './parent-watch.ts';

/** The caps and the figure they derive from, so an operator sees what `ulimit -n` gave this process. */
function connectionsLine({ total, perAddress, fileLimit }: ConnectionCaps): string {
  const basis = fileLimit === null ? 'no open-file limit known' : `open-file limit ${fileLimit}`;
  return `Connections: at most ${total} open, ${perAddress} per client address (${basis}; --max-connections, --max-connections-per-address)`;
}

export async function serve(config: Config): Promise<void> {
  const host = new ServerHost({ ...config, logToStderr: true }, (again) => process.stderr.write(`jobscope: data reset; listening again on ${again}\n`));
  let gone = (): void => process.exit(1);
  whenParentGone(() => gone());
  let url: string;
  try {
    url = await host.start();
  } catch (err) {
    if (err instanceof DataDirInUseError) {
      process.stderr.write(`jobscope: ${err.message}\n`);
      process.exit(2);
    }
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') {
      process.stderr.write(`jobscope: port ${config.port} on ${config.host} is taken; pass --port 0 for any free port, or another --port\n`);
      process.exit(2);
    }
    throw err;
  }
  const { store } = host.server.ctx;
  process.stderr.write(
    [
      `Data dir: ${config.dataDir}`,
      `Admin token (PRIVATE-TOKEN): ${store.adminToken}`,
      `Runner registration token: ${store.registrationToken}`,
      connectionsLine(connectionCaps(config)),
      `Started in ${host.server.startPhases.toString()}`,
      ...(config.settingsWarnings ?? []).map((w) => `Warning: ${w}`),
      '',
    ].join('\n'),
  );
  process.stdout.write(`Jobscope listening on ${url}\n`);
  process.stdout.write(`Open the UI signed in: ${signInLink(url, store.adminToken)}\n`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`jobscope: ${signal} received, finishing in-flight requests…\n`);
    const force = setTimeout(() => {
      process.stderr.write('jobscope: requests still open after 10 s, closing anyway\n');
      process.exit(1);
    }, 10_000);
    force.unref();
    await host.close();
    process.exit(0);
  };
  gone = () => void stop('parent process gone (IPC channel closed)');
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

// The `gitlab-ci-multi-runner register` command for this server, ready to paste into a POSIX shell.
// The URL ends in /ci: runner 1.11.5 adds /ci when it is missing, 1.5.x does not, so this form works
// with both (shared/spec/real-runner-requests.md, "Base URL").

export interface RegisterOptions {
  /** This server's origin as the runner will reach it, e.g. http://127.0.0.1:8090 */
  origin: string;
  token: string;
  description: string;
  /** Comma-separated; empty = a runner for untagged builds. */
  tags: string;
}

/** Single-quoted for sh when it holds anything but plain word characters. */
export function shellQuote(s: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(s)) return s;
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export function ciUrl(origin: string): string {
  return `${origin.replace(/\/+$/, '')}/ci`;
}

export function registerCommand(o: RegisterOptions): string {
  const tags = o.tags.split(',').map((t) => t.trim()).filter(Boolean).join(',');
  const lines = [
    'gitlab-ci-multi-runner register --non-interactive',
    `--url ${shellQuote(ciUrl(o.origin))}`,
    `--registration-token ${shellQuote(o.token)}`,
    `--description ${shellQuote(o.description.trim() || 'jobscope-runner')}`,
    '--executor shell',
  ];
  if (tags) lines.push(`--tag-list ${shellQuote(tags)}`);
  return lines.join(' \\\n  ');
}

/** Whether runners on other machines cannot reach this origin (the server answers on loopback only). */
export function isLoopbackOrigin(origin: string): boolean {
  try {
    const h = new URL(origin).hostname;
    return h === 'localhost' || h.endsWith('.localhost') || h === '[::1]' || /^127\./.test(h);
  } catch {
    return false;
  }
}

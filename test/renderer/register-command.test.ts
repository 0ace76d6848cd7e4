// The Runners view's register command is pasted into a shell: whatever the description and tags
// hold, sh must read back exactly the arguments the runner should get. Checked with a real sh.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ciUrl, isLoopbackOrigin, registerCommand } from '../../renderer/views/runners/register-command.ts';

/** The argv sh parses from the command (its first word replaced by a printer of the arguments). */
function argvOf(command: string): string[] {
  const script = command.replace(/^gitlab-ci-multi-runner /, 'printf "%s\\0" ');
  return execFileSync('sh', ['-c', script]).toString('utf8').split('\0').slice(0, -1);
}

describe('registerCommand', () => {
  it('gives the runner the server URL with /ci, the token, shell executor, the description and tags, as sh reads them', () => {
    const description = `QA's "nightly" runner $HOME \`id\` \\ ;`;
    const cmd = registerCommand({ origin: 'http://10.0.0.5:8090/', token: 'abc123TOKEN', description, tags: ' docker , linux,, ' });
    expect(cmd.startsWith('gitlab-ci-multi-runner register --non-interactive \\\n  --url http://10.0.0.5:8090/ci \\\n')).toBe(true);
    expect(argvOf(cmd)).toEqual([
      'register', '--non-interactive', '--url', 'http://10.0.0.5:8090/ci', '--registration-token', 'abc123TOKEN',
      '--description', description, '--executor', 'shell', '--tag-list', 'docker,linux',
    ]);
  });

  it('leaves out --tag-list without tags and names an empty description', () => {
    const args = argvOf(registerCommand({ origin: 'http://127.0.0.1:8090', token: 't', description: '  ', tags: ' , ' }));
    expect(args).not.toContain('--tag-list');
    expect(args[args.indexOf('--description') + 1]).toBe('jobscope-runner');
  });

  it('knows /ci and loopback origins', () => {
    expect(ciUrl('http://h:1//')).toBe('http://h:1/ci');
    expect(isLoopbackOrigin('http://127.0.0.1:8090')).toBe(true);
    expect(isLoopbackOrigin('http://localhost:8090')).toBe(true);
    expect(isLoopbackOrigin('http://[::1]:8090')).toBe(true);
    expect(isLoopbackOrigin('http://192.168.1.4:8090')).toBe(false);
  });
});

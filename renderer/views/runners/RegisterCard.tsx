// The instance's registration token and the register command for this server, as GitLab's admin
// Runners page shows them: copy either, edit the description and tags the command carries.
import { useId, useRef, useState } from 'react';
import { copyText } from '../simulator/clipboard.ts';
import { isLoopbackOrigin, registerCommand } from './register-command.ts';

type Copied = { what: string; ok: boolean } | null;

export function RegisterCard({ token, origin }: { token: string | undefined; origin: string }) {
  const [description, setDescription] = useState('jobscope-runner');
  const [tags, setTags] = useState('');
  const [copied, setCopied] = useState<Copied>(null);
  const id = useId();
  const tokenEl = useRef<HTMLElement>(null);
  const commandEl = useRef<HTMLTextAreaElement>(null);
  const command = token ? registerCommand({ origin, token, description, tags }) : '';

  async function copy(what: 'token' | 'command', text: string) {
    const ok = await copyText(text);
    setCopied({ what, ok });
    if (ok) return;
    // The clipboard was refused (the desktop shell denies it): select the text, so Ctrl+C copies it.
    if (what === 'command' && commandEl.current) {
      commandEl.current.focus();
      commandEl.current.select();
    } else if (tokenEl.current) window.getSelection()?.selectAllChildren(tokenEl.current);
  }

  return (
    <section className="card register-card" aria-labelledby={`${id}-h`} data-testid="runner-register">
      <h3 id={`${id}-h`}>Register a runner</h3>
      <div className="row gap">
        <span>Registration token</span>
        <code className="token" data-testid="registration-token" ref={tokenEl}>{token ?? '…'}</code>
        <button className="ghost" onClick={() => token && void copy('token', token)} disabled={!token} data-testid="copy-token">Copy token</button>
      </div>
      <div className="form-grid">
        <label>Description
          <input value={description} onChange={(e) => setDescription(e.target.value)} data-testid="register-description" />
        </label>
        <label>Tags (comma-separated, optional)
          <input value={tags} onChange={(e) => setTags(e.target.value)} placeholder="docker, linux" data-testid="register-tags" />
        </label>
      </div>
      <label className="command-label" htmlFor={`${id}-cmd`}>Command for gitlab-ci-multi-runner 1.x (shell executor), then <code>gitlab-ci-multi-runner run</code></label>
      <textarea
        id={`${id}-cmd`}
        className="command"
        readOnly
        rows={command.split('\n').length || 5}
        value={command}
        data-testid="register-command"
        ref={commandEl}
      />
      <div className="row gap">
        <button onClick={() => void copy('command', command)} disabled={!token} data-testid="copy-command">Copy command</button>
        <p className={`small ${copied?.ok ? 'ok-text' : 'muted'}`} role="status" data-testid="copy-status">
          {copied && (copied.ok ? `Copied the ${copied.what} to the clipboard.` : `The clipboard is not available here: the ${copied.what} is selected, press Ctrl+C.`)}
        </p>
      </div>
      {isLoopbackOrigin(origin) && (
        <p className="small muted" data-testid="loopback-note">
          This server answers on this machine only. For a runner on another machine, start it with <code>--host 0.0.0.0</code> and use its network address in <code>--url</code>.
        </p>
      )}
    </section>
  );
}

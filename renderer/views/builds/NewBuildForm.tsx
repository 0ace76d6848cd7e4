// "New build": everything POST /api/v3/sim/projects/:id/builds accepts, as a form. A refusal is
// shown beside the field it is about (and the field marked invalid), others above the buttons.
import { cloneElement, useId, useState, type ReactElement } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { ApiError, type ProjectView } from '../../api/client.ts';
import { useClient } from '../../app/client-context.tsx';
import { EMPTY_FORM, FieldError, fieldErrorOf, toNewBuild, type BuildForm, type VariableRow } from './new-build-form.ts';

type Refusal = { field?: string; text: string };

/** Fields under "More fields": a refusal of one opens it, so the message is never hidden. */
const MORE_FIELDS = ['sha', 'before_sha', 'repo_url', 'timeout', 'tag', 'options'];

export function NewBuildForm({ projects, onClose }: { projects: ProjectView[]; onClose: () => void }) {
  const client = useClient();
  const qc = useQueryClient();
  const [f, setF] = useState<BuildForm>(() => ({ ...EMPTY_FORM, project: projects[0] ? String(projects[0].id) : '' }));
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const [more, setMore] = useState(false);
  const [result, setResult] = useState<{ text: string; ids: number[] } | null>(null);
  const project = f.project || (projects[0] ? String(projects[0].id) : '');

  const create = useMutation({
    mutationFn: async () => client.createBuild(Number(project), toNewBuild(f)),
    onMutate: () => {
      setRefusal(null);
      setResult(null);
    },
    onSuccess: (answer) => {
      const ids = 'ids' in answer ? answer.ids : [answer.id];
      setResult({ ids, text: ids.length === 1 ? `Created build #${ids[0]}.` : `Created ${ids.length} builds: ${ids.map((id) => `#${id}`).join(', ')}.` });
      void qc.invalidateQueries({ queryKey: ['builds'] });
    },
    onError: (e) => {
      if (e instanceof FieldError) return setRefusal({ field: e.field, text: e.message });
      const message = e instanceof ApiError ? (e.serverMessage ?? e.message) : (e as Error).message;
      const at = fieldErrorOf(message);
      setRefusal(at ? { field: at.field, text: at.text } : { text: message });
    },
  });

  const set = (k: keyof BuildForm) => (e: { target: { value: string } }) => setF((s) => ({ ...s, [k]: e.target.value }));
  const setVar = (i: number, change: Partial<VariableRow>) => setF((s) => ({ ...s, variables: s.variables.map((v, j) => (j === i ? { ...v, ...change } : v)) }));
  const invalid = (field: string) => (refusal?.field === field ? { 'aria-invalid': true as const } : {});
  const errorAt = (field: string) =>
    refusal?.field === field ? <span className="error small" id={`nb-err-${field}`} role="alert" data-testid={`field-error-${field}`}>{refusal.text}</span> : null;

  if (!projects.length) {
    return (
      <div className="card" data-testid="new-build-form">
        <p>A build belongs to a project: <a href="#/projects">create a project</a> first.</p>
      </div>
    );
  }

  return (
    <form className="card new-build" aria-labelledby="nb-h" data-testid="new-build-form" onSubmit={(e) => { e.preventDefault(); create.mutate(); }}>
      <div className="card-head">
        <h3 id="nb-h">New build</h3>
        <button type="button" className="ghost" onClick={onClose}>Close</button>
      </div>
      <div className="form-grid">
        <Field label="Project">
          <select value={project} onChange={set('project')}>
            {projects.map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
          </select>
        </Field>
        <Field label="Name" error={errorAt('name')}><input value={f.name} onChange={set('name')} placeholder="test" {...invalid('name')} /></Field>
        <Field label="Stage" error={errorAt('stage')}><input value={f.stage} onChange={set('stage')} placeholder="test" {...invalid('stage')} /></Field>
        <Field label="Ref" error={errorAt('ref')}><input value={f.ref} onChange={set('ref')} placeholder="master" {...invalid('ref')} /></Field>
        <Field label="Commands" wide error={errorAt('commands')}>
          <textarea value={f.commands} onChange={set('commands')} rows={3} placeholder={'echo "Hello from Jobscope"\nmake test'} {...invalid('commands')} />
        </Field>
      </div>

      <fieldset className="variables" {...invalid('variables')}>
        <legend>Variables</legend>
        {f.variables.map((v, i) => (
          <div className="row gap" key={i}>
            <input aria-label={`Key of variable ${i + 1}`} value={v.key} onChange={(e) => setVar(i, { key: e.target.value })} placeholder="KEY" />
            <input aria-label={`Value of variable ${i + 1}`} value={v.value} onChange={(e) => setVar(i, { value: e.target.value })} placeholder="value" />
            <label className="check"><input type="checkbox" checked={v.public} onChange={(e) => setVar(i, { public: e.target.checked })} aria-label={`Public variable ${i + 1}`} /> public</label>
            <button type="button" className="ghost" onClick={() => setF((s) => ({ ...s, variables: s.variables.filter((_, j) => j !== i) }))} aria-label={`Remove variable ${i + 1}`}>✕</button>
          </div>
        ))}
        <button type="button" className="ghost" onClick={() => setF((s) => ({ ...s, variables: [...s.variables, { key: '', value: '', public: true }] }))}>Add variable</button>
        {errorAt('variables')}
      </fieldset>

      <div className="form-grid">
        <Field label="Tags" hint="comma-separated; only runners with all of them take it" error={errorAt('tags')}><input value={f.tags} onChange={set('tags')} placeholder="docker, linux" {...invalid('tags')} /></Field>
        <Field label="Artifacts paths" hint="one per line">
          <textarea value={f.artifactPaths} onChange={set('artifactPaths')} rows={2} placeholder="coverage/" />
        </Field>
        <Field label="Artifacts expire in"><input value={f.artifactExpire} onChange={set('artifactExpire')} placeholder="1 week" /></Field>
        <Field label="Depends on" hint="ids of builds whose artifacts it downloads" error={errorAt('depends_on')}>
          <input value={f.dependsOn} onChange={set('dependsOn')} placeholder="12, 13" {...invalid('depends_on')} />
        </Field>
        <Field label="Count" hint="identical builds to create, all or none" error={errorAt('count')}>
          <input type="number" min={1} value={f.count} onChange={set('count')} placeholder="1" {...invalid('count')} />
        </Field>
      </div>

      <details className="more" open={more || MORE_FIELDS.includes(refusal?.field ?? '')} onToggle={(e) => setMore(e.currentTarget.open)}>
        <summary>More fields</summary>
        <div className="form-grid">
          <Field label="SHA" hint="at least 8 hex characters; random when empty" error={errorAt('sha')}><input value={f.sha} onChange={set('sha')} {...invalid('sha')} /></Field>
          <Field label="Before SHA" error={errorAt('before_sha')}><input value={f.beforeSha} onChange={set('beforeSha')} placeholder="0000000000000000000000000000000000000000" {...invalid('before_sha')} /></Field>
          <Field label="Repository URL" hint="what the runner clones" error={errorAt('repo_url')}><input value={f.repoUrl} onChange={set('repoUrl')} placeholder="file:///path/to/repo.git" {...invalid('repo_url')} /></Field>
          <Field label="Timeout, s" hint="empty: the project's" error={errorAt('timeout')}><input type="number" min={1} value={f.timeout} onChange={set('timeout')} {...invalid('timeout')} /></Field>
          <label className="check"><input type="checkbox" checked={f.tag} onChange={(e) => setF((s) => ({ ...s, tag: e.target.checked }))} /> The ref is a git tag</label>
          <Field label="Other options (JSON)" wide hint="image, services, cache…; the artifacts fields above are merged in" error={errorAt('options')}>
            <textarea value={f.options} onChange={set('options')} rows={3} placeholder='{"image": "ruby:2.3"}' {...invalid('options')} />
          </Field>
        </div>
      </details>

      {refusal && !refusal.field && <p className="error" role="alert" data-testid="new-build-error">{refusal.text}</p>}
      {result && (
        <p className="ok-text" role="status" data-testid="new-build-result">
          {result.text} {result.ids.length === 1 && <a href={`#/builds/${result.ids[0]}`}>Open it</a>}
        </p>
      )}
      <div className="row gap">
        <button type="submit" disabled={create.isPending}>Create builds</button>
      </div>
    </form>
  );
}

/**
 * A labelled control: the label names it alone (so "SHA" is the input's whole name), the hint and
 * a refusal describe it (aria-describedby), and the refusal sits right under it.
 */
function Field({ label, hint, wide, error, children }: { label: string; hint?: string; wide?: boolean; error?: ReactElement<{ id: string }> | null; children: ReactElement<Record<string, unknown>> }) {
  const id = useId();
  const described = [hint ? `${id}-hint` : '', error ? error.props.id : ''].filter(Boolean).join(' ');
  return (
    <div className={wide ? 'field wide' : 'field'}>
      <label htmlFor={id}>{label}</label>
      {cloneElement(children, { id, 'aria-describedby': described || undefined })}
      {hint && <span className="hint" id={`${id}-hint`}>{hint}</span>}
      {error}
    </div>
  );
}

// The "New build" form's values and how they become the control API's NewBuild body. Empty fields
// are left out, so the server's defaults apply (the placeholders show them). The server validates;
// this only refuses what cannot be sent as typed (options that are not JSON, a dependency that is
// not an id), and words the server's refusals per field.
import type { NewBuild } from '../../api/client.ts';

export interface VariableRow {
  key: string;
  value: string;
  public: boolean;
}

export interface BuildForm {
  project: string;
  name: string;
  stage: string;
  ref: string;
  commands: string;
  variables: VariableRow[];
  tags: string;
  artifactPaths: string;
  artifactExpire: string;
  dependsOn: string;
  count: string;
  sha: string;
  beforeSha: string;
  tag: boolean;
  repoUrl: string;
  timeout: string;
  options: string;
}

export const EMPTY_FORM: BuildForm = {
  project: '',
  name: '',
  stage: '',
  ref: '',
  commands: '',
  variables: [],
  tags: '',
  artifactPaths: '',
  artifactExpire: '',
  dependsOn: '',
  count: '',
  sha: '',
  beforeSha: '',
  tag: false,
  repoUrl: '',
  timeout: '',
  options: '',
};

/** The body fields the form edits, with the words each is called by (the field's label). */
export const FIELD_LABELS: Record<string, string> = {
  name: 'Name',
  stage: 'Stage',
  ref: 'Ref',
  commands: 'Commands',
  variables: 'Variables',
  tag_list: 'Tags',
  depends_on: 'Depends on',
  count: 'Count',
  sha: 'SHA',
  before_sha: 'Before SHA',
  tag: 'Tag',
  repo_url: 'Repository URL',
  timeout: 'Timeout',
  options: 'Other options',
};

/** A refusal tied to one field of the form (`options` also covers the artifacts fields). */
export class FieldError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

const splitList = (text: string) => text.split(/[\n,]/).map((s) => s.trim()).filter(Boolean);

function optionsOf(f: BuildForm): Record<string, unknown> | undefined {
  let options: Record<string, unknown> = {};
  if (f.options.trim()) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(f.options);
    } catch (e) {
      throw new FieldError('options', `Other options are not JSON: ${(e as Error).message}`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new FieldError('options', 'Other options must be a JSON object, like {"image": "ruby:2.3"}');
    options = parsed as Record<string, unknown>;
  }
  const paths = splitList(f.artifactPaths);
  const expire = f.artifactExpire.trim();
  if (paths.length || expire) {
    const given = typeof options.artifacts === 'object' && options.artifacts !== null ? (options.artifacts as Record<string, unknown>) : {};
    options = { ...options, artifacts: { ...given, ...(paths.length ? { paths } : {}), ...(expire ? { expire_in: expire } : {}) } };
  }
  return Object.keys(options).length ? options : undefined;
}

/** The request body for the form's values; throws FieldError for what cannot be sent. */
export function toNewBuild(f: BuildForm): NewBuild {
  const body: NewBuild = {};
  const text = (v: string) => v.trim() || undefined;
  body.name = text(f.name);
  body.stage = text(f.stage);
  body.ref = text(f.ref);
  if (f.commands.trim()) body.commands = f.commands.replace(/\r\n?/g, '\n');
  f.variables.forEach((v, i) => {
    if (!v.key.trim() && v.value) throw new FieldError('variables', `Variable ${i + 1} has a value but no key`);
  });
  const variables = f.variables.filter((v) => v.key.trim()).map((v) => ({ key: v.key.trim(), value: v.value, public: v.public }));
  if (variables.length) body.variables = variables;
  if (f.tags.trim()) body.tag_list = splitList(f.tags);
  const deps = f.dependsOn.split(/[\s,]+/).filter(Boolean);
  for (const d of deps) if (!/^\d{1,15}$/.test(d)) throw new FieldError('depends_on', `Depends on takes build ids (numbers); "${d}" is not one`);
  if (deps.length) body.depends_on = deps.map(Number);
  if (f.count.trim()) body.count = Number(f.count);
  body.sha = text(f.sha);
  body.before_sha = text(f.beforeSha);
  if (f.tag) body.tag = true;
  body.repo_url = text(f.repoUrl);
  if (f.timeout.trim()) body.timeout = Number(f.timeout);
  body.options = optionsOf(f);
  for (const k of Object.keys(body) as (keyof NewBuild)[]) if (body[k] === undefined) delete body[k];
  return body;
}

/** The validator's phrases, in plain words (ajv writes "must be <= 10000", "must match pattern …"). */
const PLAIN: [RegExp, string | ((...m: string[]) => string)][] = [
  [/^must match pattern .*/, 'is not in the form its hint describes'],
  [/^must be <= (\S+)$/, (_, n) => `must be at most ${n}`],
  [/^must be >= (\S+)$/, (_, n) => `must be at least ${n}`],
  [/^must NOT have more than (\d+) characters$/, (_, n) => `must be at most ${n} characters long`],
  [/^must NOT have fewer than 1 characters$/, 'must not be empty'],
  [/^must NOT have more than (\d+) items$/, (_, n) => `takes at most ${n} entries`],
  [/^must be integer$/, 'must be a whole number'],
];
const PATTERNS: Record<string, string> = {
  sha: 'must be 8 to 64 hexadecimal characters (0-9, a-f)',
  before_sha: 'must be 8 to 64 hexadecimal characters (0-9, a-f)',
};

function plain(field: string, said: string): string {
  if (/^must match pattern/.test(said) && PATTERNS[field]) return PATTERNS[field];
  for (const [re, say] of PLAIN) {
    const m = re.exec(said);
    if (m) return typeof say === 'string' ? say : say(...m);
  }
  return said;
}

/**
 * The field a server refusal is about, and the refusal in the form's words: the validator's
 * "400 (Bad request) body/depends_on/0 must be integer" becomes "Depends on item 1 must be a whole
 * number". Undefined when the message names no field (a batch too large, a missing project).
 */
export function fieldErrorOf(message: string): { field: string; text: string } | undefined {
  // The server's own check of a field's value (depends_on naming a build that does not exist) names it without "body/".
  const checked = /^400 \(Bad request\) (depends_on) (.*)$/.exec(message);
  if (checked) return { field: checked[1]!, text: `${FIELD_LABELS[checked[1]!]} ${checked[2]}` };
  const m = /body\/(\w+)((?:\/\w+)*) (.*?)(?:, body\/.*)?$/.exec(message);
  if (!m) return undefined;
  const field = m[1]!;
  const label = FIELD_LABELS[field] ?? field;
  const index = /^\/(\d+)/.exec(m[2]!);
  return { field: field === 'tag_list' ? 'tags' : field, text: `${label}${index ? ` item ${Number(index[1]) + 1}` : ''} ${plain(field, m[3]!)}` };
}

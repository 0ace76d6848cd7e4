// The build credentials this instance read lately, by build id, for trace parts only (their token
// is checked in onRequest, before the body is read: runner-api/body-rules.ts).
//
// Why: an append was three round trips to the cluster, the credentials' lookup, then the row lock,
// then the length's UPDATE with the COMMIT; a runner sends a part every few seconds for as long as
// its build runs, and the lookup read the same row each time. What a kept entry could get wrong:
// the digests never change (a build's token and its project's two tokens are written once, and
// ids are never reused), the status does (another instance may finish or cancel the build), and the
// append's lock statement reads it again (traces.ts), so the answer's Build-Status is the row's. A
// build deleted behind the application's back fails the append's trace row (its foreign key): 404.
// Other token checks (artifacts) read the row as before.
import type { BuildCredentials } from '../ports/build.ts';

export class TraceCredentials {
  private readonly byId = new Map<number, BuildCredentials>();

  constructor(
    private readonly read: (id: number) => Promise<BuildCredentials | undefined>,
    private readonly max = 4096,
  ) {}

  /** The kept credentials at once, else read and kept. */
  get(id: number): BuildCredentials | Promise<BuildCredentials | undefined> {
    return this.byId.get(id) ?? this.read(id).then((cred) => cred && this.keep(cred));
  }

  private keep(cred: BuildCredentials): BuildCredentials {
    if (this.byId.size >= this.max) this.byId.delete(this.byId.keys().next().value as number);
    this.byId.set(cred.id, cred);
    return cred;
  }
}

// Request shapes of the runner API for the type provider and the docs. Not validated (plugin.ts
// turns validation off: GitLab's order of checks, 403 before 400, decides the status), so they
// only say what arrives: path ids as text, and query values of any shape (Rack's nested names).
import { Type } from '@sinclair/typebox';

export const RunnerPathId = Type.Object({ id: Type.String({ description: 'numeric build id' }) });
export const RunnerQuery = Type.Record(Type.String(), Type.Unknown());

// Actions on a connection's jobs and processes (app API, /api/app/connections/:id/…): the same
// routes for this server's job system and for a watched Sidekiq (once its user allowed changes),
// doing what Sidekiq Web does. Entries of the retry, scheduled and dead sets are named as Sidekiq
// Web names them, `<score>-<jid>` (a row's id in the jid's place on this server's SQLite).
import { Type, type Static } from '@sinclair/typebox';

export const ActionSet = Type.Union([Type.Literal('retry'), Type.Literal('schedule'), Type.Literal('dead')], {
  description: 'retry, schedule (the scheduled set) or dead',
});
export type ActionSet = Static<typeof ActionSet>;

const Id = Type.String({ minLength: 1, maxLength: 64 });
const Name = Type.String({ minLength: 1, maxLength: 512 });

export const EntryActionParams = Type.Object({
  id: Id,
  set: ActionSet,
  key: Type.String({ minLength: 3, maxLength: 600, description: "the entry's key, `<score>-<jid>` (Sidekiq Web's)" }),
  action: Type.Union([Type.Literal('retry'), Type.Literal('kill'), Type.Literal('enqueue')], {
    description: 'retry: back into its queue now (retry or dead set); kill: into the dead set (retry or scheduled set); enqueue: a scheduled job into its queue now',
  }),
});
export const EntryParams = Type.Object({ id: Id, set: ActionSet, key: EntryActionParams.properties.key });
export const SetParams = Type.Object({ id: Id, set: ActionSet });
export const SetActionParams = Type.Object({
  id: Id,
  set: ActionSet,
  action: Type.Union([Type.Literal('retry'), Type.Literal('kill')], { description: 'retry (or, for the scheduled set, add to queue) or kill every entry' }),
});
export const QueuedJobParams = Type.Object({ id: Id, queue: Name, jid: Type.String({ minLength: 1, maxLength: 256 }) });
export const QueueActionParams = Type.Object({ id: Id, queue: Name });
export const ProcessActionParams = Type.Object({
  id: Id,
  identity: Type.String({ minLength: 1, maxLength: 512, description: "the process's identity (hostname:pid:nonce), as in the processes list" }),
  action: Type.Union([Type.Literal('quiet'), Type.Literal('stop')], { description: 'quiet: take no new jobs (TSTP); stop: finish and exit (TERM)' }),
});

export const ActionDone = Type.Object({
  count: Type.Integer({ minimum: 0, description: 'entries or jobs acted on' }),
  left: Type.Integer({ minimum: 0, description: 'entries a bulk action left in the set (ones that are no job; or its time ran out: send it again)' }),
  message: Type.String({ description: 'what was done, in a sentence' }),
});
export type ActionDone = Static<typeof ActionDone>;

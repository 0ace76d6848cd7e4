// Why an action on a job system's jobs or processes (app-api/job-actions.ts) did nothing, whichever
// backend refused: the routes answer each with its status and the sentence.

/** The entry, queued job or process the action names is not there (gone meanwhile, or never was): 404. */
export class NotThere extends Error {}

/** The action cannot apply to what it names (a payload that is no job, killing the dead): 409. */
export class CannotAct extends Error {}

/** This job system has no such action: 400, saying what it has instead. */
export class NotOffered extends Error {}

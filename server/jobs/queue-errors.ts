// Why the job system refuses a queue operation: the control API answers them with 409.

/** The queue is of another kind than the operation needs (a demo queue, a built-in one, an app's with jobs). */
export class QueueKindError extends Error {}

/** Creating the queue would pass --max-queues. */
export class QueueLimitError extends Error {}

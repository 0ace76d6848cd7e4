// --queues: the queues a server serves and the order it tries them in, as Sidekiq 6.4 does with
// `-q name[,weight]` (Sidekiq::CLI#parse_queue and BasicFetch#queues_cmd):
// - each queue is listed max(weight, 1) times; naming a queue twice is an error;
// - no weight above 0 given: strict order, the queues as listed;
// - any weight above 0: weighted random, each fetch shuffles the weighted list and keeps each
//   name's first place, so a queue of weight 3 beside one of weight 1 comes first 3 times in 4.
//   (Equal weights above 0 are random too, as in Sidekiq: `-q a,1 -q b,1` is not strict there.)

export interface QueueOrder {
  /** Each name max(weight, 1) times, in the order given. */
  weighted: string[];
  strict: boolean;
}

/**
 * `critical,3 default` or `critical,3,default,low` (the flag repeated arrives joined by commas): a
 * number after a name is that name's weight. Answers the order, or why the text is not one.
 */
export function parseQueueOrder(raw: string): QueueOrder | { error: string } {
  const entries: { name: string; weight: number | null }[] = [];
  for (const token of raw.split(/[\s,]+/).filter(Boolean)) {
    if (/^\d+$/.test(token)) {
      const last = entries[entries.length - 1];
      if (!last || last.weight !== null) return { error: `"${token}" is a weight but follows no queue name: write name,weight (e.g. critical,3 default)` };
      last.weight = Number(token);
      continue;
    }
    if (token.length > 200 || /[\x00-\x1f\x7f]/.test(token)) return { error: `"${token.slice(0, 40)}" is not a queue name: at most 200 printable characters` };
    if (entries.some((e) => e.name === token)) return { error: `queue ${token} is named twice: give each queue once, with its weight` };
    entries.push({ name: token, weight: null });
  }
  if (entries.length === 0) return { error: 'no queue named: give one or more names, each with an optional weight (critical,3 default)' };
  if (entries.some((e) => (e.weight ?? 0) > 1000)) return { error: 'a weight is at most 1000' };
  return {
    weighted: entries.flatMap((e) => Array<string>(Math.max(e.weight ?? 0, 1)).fill(e.name)),
    strict: !entries.some((e) => (e.weight ?? 0) > 0),
  };
}

/** The queues in the order one fetch tries them (BasicFetch#queues_cmd); `random` in [0, 1). */
export function orderQueues(order: QueueOrder, random: () => number = Math.random): string[] {
  if (order.strict) return [...new Set(order.weighted)];
  const list = [...order.weighted];
  // Fisher-Yates, as Ruby's Array#shuffle.
  for (let i = list.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [list[i], list[j]] = [list[j]!, list[i]!];
  }
  return [...new Set(list)];
}

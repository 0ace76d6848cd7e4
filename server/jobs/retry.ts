// Sidekiq's retry backoff: (count^4) + 15 + rand(30) * (count + 1) seconds, count = retries so far.
// `unitMs` is the length of that "second", so tests can make 25 retries take moments.
export function retryDelay(retryCount: number, unitMs: number, random: () => number = Math.random): number {
  const seconds = retryCount ** 4 + 15 + Math.floor(random() * 30) * (retryCount + 1);
  return seconds * unitMs;
}

/** Sidekiq 6.4's backoff (job_retry.rb delay_for): (count**4) + 15 + rand(10) * (count + 1) seconds; the Redis backend's. */
export function sidekiqRetryDelay(count: number, unitMs: number, random: () => number = Math.random): number {
  return (count ** 4 + 15 + Math.floor(random() * 10) * (count + 1)) * unitMs;
}

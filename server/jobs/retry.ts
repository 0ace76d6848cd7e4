// Sidekiq's retry backoff: (count^4) + 15 + rand(30) * (count + 1) seconds, count = retries so far.
// `unitMs` is the length of that "second", so tests can make 25 retries take moments.
export function retryDelay(retryCount: number, unitMs: number, random: () => number = Math.random): number {
  const seconds = retryCount ** 4 + 15 + Math.floor(random() * 30) * (retryCount + 1);
  return seconds * unitMs;
}

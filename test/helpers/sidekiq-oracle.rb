# Sidekiq's own view of a Redis, as JSON on stdout: the oracle Jobscope's sidekiq connection is
# compared with. Read-only: ProcessSet.new(false) skips the cleanup that SREMs dead processes.
#   ruby test/helpers/sidekiq-oracle.rb redis://127.0.0.1:6379/0 [days]
# Namespaces: Debian ships no redis-namespace gem, so a namespaced Redis is checked by reading the
# un-prefixed keys here and the prefixed copy in Jobscope (see test/sidekiq/).
require "json"
require "sidekiq"
require "sidekiq/api"

Redis.silence_deprecations = true if Redis.respond_to?(:silence_deprecations=)
url = ARGV[0] or abort("usage: sidekiq-oracle.rb REDIS_URL [DAYS]")
days = (ARGV[1] || "7").to_i
Sidekiq.configure_client { |c| c.redis = { url: url } }
Sidekiq.logger.level = Logger::WARN

stats = Sidekiq::Stats.new
history = Sidekiq::Stats::History.new(days)
out = {
  now: Time.now.to_f,
  stats: {
    processed: stats.processed, failed: stats.failed, enqueued: stats.enqueued,
    scheduled_size: stats.scheduled_size, retry_size: stats.retry_size, dead_size: stats.dead_size,
    processes_size: stats.processes_size,
  },
  # latency_from/latency_to: Time.now around Queue#latency, which takes its own Time.now; `now` above
  # is earlier by as long as the reads between took (seconds on a loaded machine), so only these two
  # bound the tail's enqueued_at: within [latency_from - latency, latency_to - latency].
  queues: Sidekiq::Queue.all.map { |q|
    from = Time.now.to_f
    latency = q.latency
    { name: q.name, size: q.size, latency: latency, latency_from: from, latency_to: Time.now.to_f }
  },
  processes: Sidekiq::ProcessSet.new(false).map { |p|
    { identity: p.identity, hostname: p["hostname"], pid: p["pid"], tag: p.tag, started_at: p["started_at"],
      queues: p.queues, labels: p.labels, concurrency: p["concurrency"], busy: p["busy"], beat: p["beat"],
      quiet: p["quiet"] == "true",
      # GitLab's process_metrics: `started_at: Time.at(process['started_at'])`, as ActiveSupport's
      # Time#as_json writes it (xmlschema with 3 digits: the float's exact value, truncated).
      started_at_gitlab: Time.at(p["started_at"]).xmlschema(3) }
  },
  # The Busy page's job list: Web's busy.erb reads each entry through JobRecord as below.
  workers: Sidekiq::Workers.new.map { |process, thread, work|
    job = Sidekiq::JobRecord.new(work["payload"])
    { process: process, thread: thread, queue: work["queue"], run_at: work["run_at"], jid: job.jid, class: job.display_class, args: job.display_args }
  },
  workers_size: Sidekiq::Workers.new.size,
  retry_size: Sidekiq::RetrySet.new.size,
  scheduled_size: Sidekiq::ScheduledSet.new.size,
  dead_size: Sidekiq::DeadSet.new.size,
  history: { processed: history.processed, failed: history.failed },
}
puts JSON.generate(out)

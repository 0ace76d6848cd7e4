# Sidekiq's own view of a Redis, as JSON: the oracle Jobscope's sidekiq connection is compared with.
# Read-only: ProcessSet.new(false) skips the cleanup that SREMs dead processes.
#   ruby test/helpers/sidekiq-oracle.rb redis://127.0.0.1:6379/0 [days]   one view on stdout
#   ruby test/helpers/sidekiq-oracle.rb --serve                            many requests, one process
# --serve reads one JSON request a line ({"op":"view","url","days"} or {"op":"ruby","url","code"})
# and answers one JSON line ({"ok":true,"out":...} or {"ok":false,"error":...}). Why: starting Ruby
# and loading Sidekiq costs ~0.2 s of CPU (over a second of wall time on a loaded machine), and the
# tests poll this view every 100-200 ms; the answers are those of the same API calls either way.
# Namespaces: Debian ships no redis-namespace gem, so a namespaced Redis is checked by reading the
# un-prefixed keys here and the prefixed copy in Jobscope (see test/sidekiq/).
require "json"
require "stringio"
require "sidekiq"
require "sidekiq/api"

Redis.silence_deprecations = true if Redis.respond_to?(:silence_deprecations=)

def oracle_view(days)
  stats = Sidekiq::Stats.new
  history = Sidekiq::Stats::History.new(days)
  {
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
end

# A scope with no locals of ours: a snippet assigning `out` or `code` changes nothing here.
def empty_scope = binding

# A test's Ruby snippet, in a scope of its own (its locals do not outlive it), with what it prints.
def run_snippet(code)
  out = StringIO.new
  $stdout = out
  begin
    eval(code, empty_scope, "snippet")
  ensure
    $stdout = STDOUT
  end
  out.string
end

if ARGV[0] == "--serve"
  # Answers go to a copy of stdout; anything else printing to stdout (a logger, a stray warning)
  # lands on stderr instead of in the middle of an answer.
  answers = STDOUT.dup
  answers.sync = true
  STDOUT.reopen(STDERR)
  Sidekiq.logger = Logger.new(STDERR)
  Sidekiq.logger.level = Logger::WARN
  pools = {}
  while (line = $stdin.gets)
    begin
      req = JSON.parse(line)
      # One pool per URL, as a fresh process's configure_client would make; kept for the next request.
      Sidekiq.redis = (pools[req["url"]] ||= Sidekiq::RedisConnection.create(url: req["url"]))
      out = req["op"] == "view" ? oracle_view(req["days"].to_i) : run_snippet(req["code"])
      answers.puts(JSON.generate(ok: true, out: out))
    rescue Exception => e # rubocop:disable Lint/RescueException -- a snippet's SyntaxError too: answer, keep serving
      answers.puts(JSON.generate(ok: false, error: "#{e.class}: #{e.message}\n#{(e.backtrace || []).first(5).join("\n")}"))
    end
  end
else
  url = ARGV[0] or abort("usage: sidekiq-oracle.rb REDIS_URL [DAYS] | --serve")
  Sidekiq.configure_client { |c| c.redis = { url: url } }
  Sidekiq.logger.level = Logger::WARN
  puts JSON.generate(oracle_view((ARGV[1] || "7").to_i))
end

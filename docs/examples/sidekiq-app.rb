# A small Sidekiq app to watch with Jobscope when you have none at hand (README: "Watching any
# Sidekiq through its Redis"). Run the workers, then push jobs:
#   REDIS_URL=redis://127.0.0.1:6379/0 sidekiq -r ./docs/examples/sidekiq-app.rb -q default -q mailers -c 5
#   REDIS_URL=redis://127.0.0.1:6379/0 ruby ./docs/examples/sidekiq-app.rb 200
# ReportJob takes a few seconds, MailJob is quick, FlakyJob fails one time in three (retries with
# Sidekiq's backoff, then the dead set).
require "sidekiq"
Redis.silence_deprecations = true if Redis.respond_to?(:silence_deprecations=)

class ReportJob
  include Sidekiq::Worker
  def perform(seconds) = sleep(seconds.to_f)
end

class MailJob
  include Sidekiq::Worker
  sidekiq_options queue: "mailers"
  def perform(_to) = sleep(0.05)
end

class FlakyJob
  include Sidekiq::Worker
  sidekiq_options retry: 2
  def perform(n) = (raise ArgumentError, "flaky job #{n} failed" if rand(3).zero?)
end

if $PROGRAM_NAME == __FILE__
  count = Integer(ARGV.fetch(0, "100"))
  count.times do |i|
    ReportJob.perform_async(1 + rand(4))
    MailJob.perform_async("user#{i}@example.com")
    FlakyJob.perform_async(i)
  end
  puts "pushed #{count * 3} jobs into default and mailers"
end

// #/scheduled: a Sidekiq's scheduled set (Sidekiq Web's Scheduled page).
import { FailedSetView } from './FailedSetView.tsx';

export default function ScheduledView() {
  return <FailedSetView set="scheduled" />;
}

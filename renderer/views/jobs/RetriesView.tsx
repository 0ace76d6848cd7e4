// #/retries: the retry set (Sidekiq Web's Retries page).
import { FailedSetView } from './FailedSetView.tsx';

export default function RetriesView() {
  return <FailedSetView set="retries" />;
}

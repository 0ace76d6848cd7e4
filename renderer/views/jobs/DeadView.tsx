// #/dead: the dead set (Sidekiq Web's Dead page).
import { FailedSetView } from './FailedSetView.tsx';

export default function DeadView() {
  return <FailedSetView set="dead" />;
}

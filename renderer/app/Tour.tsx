// The first-run tour: the three things Jobscope is for (watch, simulate, connect), one step each,
// with a button that opens the view. Shown once: "seen" is kept with the remembered view state
// (the backend's data dir), so it stays seen across restarts and ports; the help dialog reopens it.
import { useEffect, useRef, useState } from 'react';
import { Modal } from './Modal.tsx';
import { navigate } from './route.ts';

export const TOUR_SEEN_KEY = 'tour_seen';

const STEPS = [
  {
    title: 'Watch a job system',
    view: 'dashboard',
    open: 'Open the dashboard',
    text: 'The dashboard charts queue backlog, latency, busy workers and job counters over time, with thresholds that raise alerts. It starts on this server’s own job system.',
  },
  {
    title: 'Simulate CI runners',
    view: 'simulator',
    open: 'Open the simulator',
    text: 'The simulator runs fleets of virtual GitLab runners against this server (or another coordinator): they pull builds, stream traces and upload artifacts, misbehaving on purpose when asked.',
  },
  {
    title: 'Connect a GitLab',
    view: 'connections',
    open: 'Open connections',
    text: 'Connections add a real GitLab instance (its Sidekiq metrics API, with an admin token) to watch beside this one; pick it in the header’s Connection menu.',
  },
] as const;

export function Tour({ onClose }: { onClose: () => void }) {
  const [i, setI] = useState(0);
  const step = STEPS[i]!;
  const last = i === STEPS.length - 1;
  // Each step's main button takes the focus, so Enter walks the tour. Focused by an effect rather
  // than autoFocus: the button is no longer remounted per step, and the focus does not depend on
  // the renderer honouring autoFocus (Preact, tried for load time, only sets the attribute).
  const next = useRef<HTMLButtonElement>(null);
  useEffect(() => next.current?.focus(), [i]);
  return (
    <Modal labelledBy="tour-title" onClose={onClose} testId="tour">
      <p className="tour-step" data-testid="tour-step">Step {i + 1} of {STEPS.length}</p>
      <h2 id="tour-title">{step.title}</h2>
      <p>{step.text}</p>
      <div className="actions">
        <button className="ghost" onClick={onClose}>Skip the tour</button>
        <button
          className="ghost"
          onClick={() => {
            navigate(`/${step.view}`);
            onClose();
          }}
        >
          {step.open}
        </button>
        <span className="spacer" />
        {i > 0 && <button className="ghost" onClick={() => setI(i - 1)}>Back</button>}
        <button ref={next} data-autofocus onClick={() => (last ? onClose() : setI(i + 1))}>{last ? 'Done' : 'Next'}</button>
      </div>
    </Modal>
  );
}

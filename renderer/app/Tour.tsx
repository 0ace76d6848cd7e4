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
    point: [] as string[],
    focus: null,
    text: 'The dashboard charts queue backlog, latency, busy workers and job counters over time, with thresholds that raise alerts. It starts on this server’s own job system.',
  },
  {
    title: 'Simulate CI runners',
    view: 'simulator',
    open: 'Open the simulator',
    point: [] as string[],
    focus: null,
    text: 'The simulator runs fleets of virtual GitLab runners against this server (or another coordinator): they pull builds, stream traces and upload artifacts, misbehaving on purpose when asked.',
  },
  {
    title: 'Connect a GitLab or a Sidekiq',
    view: 'connections',
    open: 'Add a Sidekiq connection',
    text: 'Watch a production Sidekiq through its Redis: in Connections, “Add a Sidekiq” takes its Redis URL and reads it, changing nothing there unless you allow changes on that connection. A GitLab joins through its Sidekiq metrics API with an admin token. Then pick either in the header’s Connection menu, outlined above with the Connections link.',
    // What the text names, outlined while the step is shown; the button chooses the Sidekiq form
    // (a click on its kind) and focuses its first field.
    point: ['connection-picker', 'nav-connections'],
    focus: ['[data-testid="add-kind-sidekiq"]', '[data-testid="sk-name"]'],
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
  useEffect(() => {
    // A link folded into the header's "More" list is pointed at through its More button.
    const els = step.point
      .map((id) => document.querySelector<HTMLElement>(`.topbar [data-testid="${id}"]`))
      .map((el) => (el && el.offsetParent === null ? el.closest('.nav-more')?.querySelector('button') : el))
      .filter((el): el is HTMLElement => !!el);
    for (const el of els) el.setAttribute('data-tour-point', '');
    return () => els.forEach((el) => el.removeAttribute('data-tour-point'));
  }, [step]);
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
            if (step.focus) whenShown(step.focus[0], (kind) => {
              kind.click();
              whenShown(step.focus[1], (field) => field.focus());
            });
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

/** Runs `fn` on what a step's button opened once its (lazily loaded) view shows it, after the
 *  dialog has closed (the page behind it is inert until then); gives up after 5 s. */
function whenShown(selector: string, fn: (el: HTMLElement) => void, until = Date.now() + 5000): void {
  setTimeout(() => {
    const el = document.querySelector<HTMLElement>(selector);
    if (el) fn(el);
    else if (Date.now() < until) whenShown(selector, fn, until);
  }, 50);
}

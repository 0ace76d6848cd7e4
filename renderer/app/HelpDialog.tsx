// "?": the keyboard shortcuts, and the way back to the first-run tour.
import { Modal } from './Modal.tsx';
import type { ViewShortcut } from './shortcuts.ts';

export function HelpDialog({ shortcuts, onClose, onTour }: { shortcuts: ViewShortcut[]; onClose: () => void; onTour: () => void }) {
  return (
    <Modal labelledBy="help-title" onClose={onClose} testId="help-dialog">
      <h2 id="help-title">Keyboard shortcuts</h2>
      <table className="shortcuts">
        <thead>
          <tr><th scope="col">Keys</th><th scope="col">What they do</th></tr>
        </thead>
        <tbody>
          {shortcuts.map((s) => (
            <tr key={s.key} data-testid="shortcut-row">
              <th scope="row"><kbd>g</kbd> then <kbd>{s.key}</kbd></th>
              <td>Open {s.label}</td>
            </tr>
          ))}
          <tr data-testid="shortcut-row"><th scope="row"><kbd>/</kbd></th><td>Focus the view&apos;s filter</td></tr>
          <tr data-testid="shortcut-row"><th scope="row"><kbd>?</kbd></th><td>Show this help</td></tr>
          <tr data-testid="shortcut-row"><th scope="row"><kbd>Esc</kbd></th><td>Close a dialog</td></tr>
        </tbody>
      </table>
      <p className="muted small">Shortcuts do nothing while you type in a field.</p>
      <div className="actions">
        <button className="ghost" onClick={onTour}>Take the tour again</button>
        <span className="spacer" />
        <button onClick={onClose} data-autofocus>Close</button>
      </div>
    </Modal>
  );
}

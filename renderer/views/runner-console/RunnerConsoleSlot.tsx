// Slot for the Runner console view (issue 5 §6): act as one runner by hand and see each raw
// exchange. Replace this file's use in views/registry.ts with the real view.
export default function RunnerConsoleSlot() {
  return (
    <section className="view" data-testid="view-runner-console">
      <h2>Runner console</h2>
      <p className="muted">The runner console is not built yet.</p>
    </section>
  );
}

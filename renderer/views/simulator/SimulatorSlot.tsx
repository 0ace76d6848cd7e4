// Slot for the Simulator view (issue 5 §6): fleet form or scenario, start/stop, runner states,
// throughput chart, journal. Replace this file's use in views/registry.ts with the real view.
export default function SimulatorSlot() {
  return (
    <section className="view" data-testid="view-simulator">
      <h2>Simulator</h2>
      <p className="muted">The runner simulator view is not built yet. Meanwhile: <code>npm run simulate -- --help</code>.</p>
    </section>
  );
}

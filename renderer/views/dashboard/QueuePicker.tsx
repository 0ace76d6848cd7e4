// Which queues the charts show: the top N by peak backlog (the server's default), or a chosen set.
export function QueuePicker({ all, chosen, onChange, top }: { all: string[]; chosen: string[] | null; onChange: (q: string[] | null) => void; top: number }) {
  const set = new Set(chosen ?? []);
  return (
    <details className="picker" data-testid="queue-picker">
      <summary>{chosen ? `${chosen.length} queue${chosen.length === 1 ? '' : 's'} chosen` : `Top ${top} queues`}</summary>
      <div className="picker-body">
        <button className="ghost" onClick={() => onChange(null)} disabled={!chosen}>Back to the top {top}</button>
        {all.map((q) => (
          <label key={q} className="check">
            <input
              type="checkbox"
              checked={set.has(q)}
              onChange={(e) => {
                const n = new Set(set);
                if (e.target.checked) n.add(q);
                else n.delete(q);
                onChange(n.size ? [...n] : null);
              }}
            />
            {q}
          </label>
        ))}
        {!all.length && <span className="muted small">No queues in this range.</span>}
      </div>
    </details>
  );
}

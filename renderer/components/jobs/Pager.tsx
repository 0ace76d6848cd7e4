// Previous / next through a paged list, with where we are ("Page 2 of 5 · 112 jobs").
import './job-table.css';
import { num } from '../format.ts';

// `loading`: the rows shown are still the previous page's (kept while the asked page loads, so the
// table does not flash empty); the status says so rather than naming a page the rows are not.
export function Pager({ page, perPage, total, onPage, label, noun = 'job', loading = false }: { page: number; perPage: number; total: number; onPage(page: number): void; label: string; noun?: string; loading?: boolean }) {
  const pages = Math.max(1, Math.ceil(total / perPage));
  const at = `${Math.min(page, pages)} of ${pages}`;
  return (
    <nav className="pager row gap" aria-label={label} aria-busy={loading} data-testid="pager">
      <button className="ghost" onClick={() => onPage(page - 1)} disabled={page <= 1} data-testid="pager-prev">Previous</button>
      <span className="small" data-testid="pager-status">{loading ? `Loading page ${at}…` : `Page ${at}`} · {num(total)} {noun}{total === 1 ? '' : 's'}</span>
      <button className="ghost" onClick={() => onPage(page + 1)} disabled={page >= pages} data-testid="pager-next">Next</button>
    </nav>
  );
}

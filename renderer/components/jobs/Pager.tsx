// Previous / next through a paged list, with where we are ("Page 2 of 5 · 112 jobs").
import './job-table.css';
import { num } from '../format.ts';

export function Pager({ page, perPage, total, onPage, label, noun = 'job' }: { page: number; perPage: number; total: number; onPage(page: number): void; label: string; noun?: string }) {
  const pages = Math.max(1, Math.ceil(total / perPage));
  return (
    <nav className="pager row gap" aria-label={label} data-testid="pager">
      <button className="ghost" onClick={() => onPage(page - 1)} disabled={page <= 1} data-testid="pager-prev">Previous</button>
      <span className="small" data-testid="pager-status">Page {Math.min(page, pages)} of {pages} · {num(total)} {noun}{total === 1 ? '' : 's'}</span>
      <button className="ghost" onClick={() => onPage(page + 1)} disabled={page >= pages} data-testid="pager-next">Next</button>
    </nav>
  );
}

// The views menu in the header, on one row at any window width from 1024 px: the links that fit
// are shown, the rest fold into a "More" disclosure at the end (priority+ navigation). Widths are
// measured from a hidden copy of every link, so what fits is known before anything is moved, and
// measured again whenever the room changes (window, other header controls, fonts). Each view is
// rendered once, in the row or in the list, so its link keeps its one data-testid.
import { useEffect, useId, useLayoutEffect, useRef, useState } from 'react';
import type { ViewEntry } from '../views/registry.ts';

const GAP = 4; // .topbar nav's gap, in px

export function HeaderNav({ views, activeId }: { views: ViewEntry[]; activeId: string }) {
  const nav = useRef<HTMLElement>(null);
  const measure = useRef<HTMLDivElement>(null);
  const [fit, setFit] = useState(views.length);
  const [open, setOpen] = useState(false);
  const listId = useId();
  const labels = views.map((v) => v.label).join('\n');

  useLayoutEffect(() => {
    const el = nav.current;
    const m = measure.current;
    if (!el || !m) return;
    const compute = () => {
      const widths = [...m.children].map((c) => c.getBoundingClientRect().width);
      const more = widths.pop() ?? 0;
      const room = el.clientWidth;
      const all = widths.reduce((sum, w) => sum + w + GAP, -GAP);
      if (all <= room) return setFit(widths.length);
      let used = more;
      let n = 0;
      for (const w of widths) {
        if (used + GAP + w > room) break;
        used += GAP + w;
        n++;
      }
      setFit(n);
    };
    compute();
    const ro = new ResizeObserver(compute);
    ro.observe(el);
    ro.observe(m);
    return () => ro.disconnect();
  }, [labels]);

  // The list closes on Escape (focus back on its button), on a click elsewhere, on a choice and on navigation.
  const button = useRef<HTMLButtonElement>(null);
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      setOpen(false);
      button.current?.focus();
    };
    const onDown = (e: PointerEvent) => {
      if (!box.current?.contains(e.target as Node)) setOpen(false);
    };
    const onHash = () => setOpen(false);
    document.addEventListener('keydown', onKey);
    document.addEventListener('pointerdown', onDown);
    window.addEventListener('hashchange', onHash);
    return () => {
      document.removeEventListener('keydown', onKey);
      document.removeEventListener('pointerdown', onDown);
      window.removeEventListener('hashchange', onHash);
    };
  }, [open]);

  const shown = views.slice(0, fit);
  const folded = views.slice(fit);
  const link = (v: ViewEntry, onClick?: () => void) => (
    <a key={v.id} href={`#/${v.id}`} className={v.id === activeId ? 'active' : ''} aria-current={v.id === activeId ? 'page' : undefined} onClick={onClick} data-testid={`nav-${v.id}`}>
      {v.label}
    </a>
  );

  return (
    <nav aria-label="Views" ref={nav} className="header-nav">
      {shown.map((v) => link(v))}
      {folded.length > 0 && (
        <div className="nav-more" ref={box}>
          <button ref={button} className={`ghost${folded.some((v) => v.id === activeId) ? ' active' : ''}`} aria-expanded={open} aria-controls={listId} onClick={() => setOpen((o) => !o)} data-testid="nav-more">
            More<span aria-hidden="true"> ▾</span>
          </button>
          <ul id={listId} className="nav-more-list" hidden={!open}>
            {folded.map((v) => (
              <li key={v.id}>{link(v, () => setOpen(false))}</li>
            ))}
          </ul>
        </div>
      )}
      {/* Never seen nor read: the widths every link and the More button would take. */}
      <div ref={measure} className="nav-measure" aria-hidden="true">
        {views.map((v) => (
          <span key={v.id}>{v.label}</span>
        ))}
        <span>More ▾</span>
      </div>
    </nav>
  );
}

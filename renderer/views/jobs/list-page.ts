// A job list's page number lives in its route (`#/dead?page=3`), so a job page's Back link, and the
// browser's back, return to the page the job was opened from.
import { useEffect } from 'react';
import { navigate, useRoute, type Route } from '../../app/route.ts';

let lastList: string | null = null;

const pathOf = (r: Route) => `/${[r.view, ...r.rest].map(encodeURIComponent).join('/')}`;

export function useListPage(): [number, (page: number) => void] {
  const route = useRoute();
  const page = Math.max(1, Math.floor(Number(route.query.get('page'))) || 1);
  const query = route.query.toString();
  const here = `#${pathOf(route)}${query ? `?${query}` : ''}`;
  useEffect(() => {
    lastList = here;
  }, [here]);
  const setPage = (p: number) => {
    const q = new URLSearchParams(route.query);
    if (p > 1) q.set('page', String(p));
    else q.delete('page');
    const text = q.toString();
    navigate(`${pathOf(route)}${text ? `?${text}` : ''}`);
  };
  return [page, setPage];
}

/** The list a job page returns to: the one it was opened from (with its page), else `fallback`. */
export function listToReturnTo(fallback: string): string {
  return lastList && lastList.split('?')[0] === fallback ? lastList : fallback;
}

// A hash router small enough to read in one go: `#/builds/12` → { view: 'builds', rest: ['12'] }.
// Hash routes need no server-side fallback and work the same from a file:// or http:// origin.
import { useEffect, useState } from 'react';

export interface Route {
  view: string;
  rest: string[];
  query: URLSearchParams;
}

export function parseRoute(hash: string): Route {
  const h = hash.replace(/^#\/?/, '');
  const [path = '', query = ''] = h.split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  return { view: parts[0] ?? '', rest: parts.slice(1), query: new URLSearchParams(query) };
}

export function navigate(path: string): void {
  window.location.hash = path.startsWith('/') ? path : `/${path}`;
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const on = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return route;
}

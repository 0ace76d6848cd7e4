import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { Root } from './app/Root.tsx';
import { parseRoute } from './app/route.ts';
import { viewFor } from './views/registry.ts';
import './styles.css';

// The view the window opens on is loaded before the first render (index.html already fetches its
// chunks beside this one, so this is a few ms): in a browser the first render is the shell with
// that view, which then renders at once instead of suspending, and React reveals a suspended view
// only after its fallback has been up for 300 ms. Never more than a second's wait for it.
const LANDING_WAIT_MS = 1000;
const landing = viewFor(parseRoute(window.location.hash).view).component.preload?.();

const queryClient = new QueryClient({
  defaultOptions: { queries: { retry: 1, refetchOnWindowFocus: false, staleTime: 1000 } },
});

const render = () =>
  createRoot(document.getElementById('root')!).render(
    <StrictMode>
      <QueryClientProvider client={queryClient}>
        <Root />
      </QueryClientProvider>
    </StrictMode>,
  );

void Promise.race([landing?.catch(() => {}), new Promise((r) => setTimeout(r, LANDING_WAIT_MS))]).then(render);

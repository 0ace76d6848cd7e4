import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { Root } from './app/Root.tsx';
import { parseRoute } from './app/route.ts';
import { viewFor } from './views/registry.ts';
import './styles.css';

// The view the window opens on is loaded now, beside the sign-in, not when the shell first asks
// for it (index.html already fetches its chunks): by then it renders without suspending.
void viewFor(parseRoute(window.location.hash).view).component.preload?.();

const queryClient = new QueryClient({
  defaultOptions: { queries: { retry: 1, refetchOnWindowFocus: false, staleTime: 1000 } },
});

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <Root />
    </QueryClientProvider>
  </StrictMode>,
);

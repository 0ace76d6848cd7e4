import { createContext, useContext } from 'react';
import type { Client } from '../api/client.ts';

export const ClientContext = createContext<Client | null>(null);

export function useClient(): Client {
  const c = useContext(ClientContext);
  if (!c) throw new Error('useClient outside <ClientContext.Provider>');
  return c;
}

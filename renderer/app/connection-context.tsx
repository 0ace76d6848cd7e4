// Which connection the dashboard shows; chosen in the header, kept across reloads.
import { createContext, useContext } from 'react';

export const SelectedConnection = createContext<{ id: string; set: (id: string) => void }>({ id: 'embedded', set: () => {} });

export function useSelectedConnection() {
  return useContext(SelectedConnection);
}

export { CONNECTION_KEY } from './storage-keys.ts';

// The UI's remembered state on the backend (GET/PUT /api/app/ui-state): see renderer/app/ui-state.ts.
import type { UiState } from '../../contract/ui-state.ts';
import type { Client } from './client.ts';

export type { UiState };

export const uiStateApi = {
  get: (c: Client) => c.json<UiState>('GET', '/api/app/ui-state'),
  put: (c: Client, values: Record<string, unknown>) => c.json<UiState>('PUT', '/api/app/ui-state', { json: { values } }),
};

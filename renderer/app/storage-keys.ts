// The browser-storage keys the app reads, in a module with no imports: the early entry
// (renderer/early.ts) reads them before React or the API client have loaded.
/** sessionStorage: the admin token of this tab (api/session.ts). */
export const TOKEN_KEY = 'jobscope.token';
/** localStorage: the local copy of the remembered view state (app/ui-state.ts). */
export const UI_STATE_KEY = 'jobscope.ui-state';
/** localStorage: the connection chosen before the view state kept it (app/connection-context.tsx). */
export const CONNECTION_KEY = 'jobscope.connection';
/** localStorage: ids of the alerts this browser has notified of (app/alert-notify.ts): once per firing, across reloads. */
export const ALERTS_NOTIFIED_KEY = 'jobscope.alerts-notified';

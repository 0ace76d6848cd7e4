// The UI's own state kept by the backend (/api/app/ui-state): the dashboard's range, filters, the
// selected connection, the theme, whether the first-run tour was seen. Kept in the data dir, not
// only in the browser's localStorage, because browser mode may come back on another port (another
// origin, empty localStorage). The server treats the values as opaque JSON; the renderer checks
// each one when it reads it.
import { Type, type Static } from '@sinclair/typebox';

const Values = Type.Record(Type.String({ minLength: 1, maxLength: 100 }), Type.Unknown(), {
  maxProperties: 200,
  description: 'key → any JSON value; the whole document is at most --max-ui-state-kib',
});

export const UiStateUpdate = Type.Object({ values: Values }, { additionalProperties: false });
export type UiStateUpdate = Static<typeof UiStateUpdate>;

export const UiState = Type.Object({
  values: Values,
  updated_at: Type.Union([Type.String(), Type.Null()], { description: 'when it was last saved; null when never' }),
});
export type UiState = Static<typeof UiState>;

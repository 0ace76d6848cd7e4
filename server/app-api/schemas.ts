// Route-only schemas of the app API (params and query strings); the answers' schemas are the
// contract's (contract/app.ts).
import { Type } from '@sinclair/typebox';

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export const MessageAnswer = Type.Object({ message: Type.String() });

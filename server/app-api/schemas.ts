// Route-only schemas of the app API (params and query strings); the answers' schemas are the
// contract's (server/contract/app.ts).
import { Type } from '@sinclair/typebox';

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export const ExportQuery = Type.Object({
  from: Type.Integer({ description: 'epoch ms' }),
  to: Type.Integer({ description: 'epoch ms' }),
  points: Type.Optional(Type.Integer({ minimum: 10, maximum: 5000, default: 1000 })),
  queues: Type.Optional(Type.String({ description: 'comma-separated queue names; default: the top queues by peak backlog' })),
  top: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 8 })),
});

export const MessageAnswer = Type.Object({ message: Type.String() });

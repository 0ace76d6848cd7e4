// What a trace append answers, whichever adapter holds the trace.

export type AppendResult = { ok: true; length: number } | { ok: false; length: number; reason: 'range' | 'too-large' };

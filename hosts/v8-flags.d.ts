export const START_UP_MS: number;
export function applyV8Flags(): void;
export function endStartUp(): void;

// The charts' series colours, in a module of its own: the early entry draws the dashboard's first
// chart with them before React has loaded (views/dashboard/early-chart.ts).
export const PALETTE = ['#3b82f6', '#f97316', '#10b981', '#e11d48', '#8b5cf6', '#eab308', '#06b6d4', '#db2777', '#84cc16', '#64748b', '#a16207', '#0ea5e9'];

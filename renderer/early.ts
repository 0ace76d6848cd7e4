// The early entry: index.html holds it inline as the head's first script (vite.config.ts,
// inlineEarlyEntry), so it runs while the head is parsed, before the 330 kB main script has loaded
// and run. It starts requests whose answers the
// app adopts later (views/dashboard/early-history.ts), draws the dashboard's first chart from the
// history's answer (views/dashboard/early-chart.ts) in the theme the app will apply.
import { applyTheme, storedTheme } from './app/theme-choice.ts';
import { drawEarlyChart } from './views/dashboard/early-chart.ts';
import { startEarlyHistory } from './views/dashboard/early-history.ts';

try {
  applyTheme(storedTheme());
} catch {
  // storage refused: the app's own theme code says so when it loads
}
const early = startEarlyHistory();
if (early) void drawEarlyChart(early);

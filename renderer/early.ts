// The early entry: index.html loads it (async) beside the main one, so it runs as soon as it has
// arrived, before the 330 kB main script has loaded and run. It only starts requests whose
// answers the app adopts later (views/dashboard/early-history.ts).
import { startEarlyHistory } from './views/dashboard/early-history.ts';

startEarlyHistory();

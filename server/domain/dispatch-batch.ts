// Group commit for `builds/register`. Every poll that hands out a build is a write (and one that
// records contact may be); one SQLite transaction each made a WAL commit per poll, several 4 KiB
// pages appended per commit, and that commit cost more than the rest of the poll. Polls that reach
// this point in the same event-loop turn are handled in ONE transaction instead, in arrival order
// (each still takes the oldest pending build it may, so exactly-once and oldest-first hold as
// before), and every answer waits until COMMIT has returned: an acknowledged build is in the WAL,
// in the kernel, as the durability rule asks.
import type { BuildsPort, ProjectsPort, RunnersPort, Transactions } from '../store/ports/ports.ts';
import type { Build } from '../store/ports/build.ts';
import type { Project } from '../store/ports/project.ts';
import type { Runner, RunnerInfo } from '../store/ports/runner.ts';

/** A build handed out, with its project as read in the same transaction. */
export interface Taken {
  build: Build;
  project: Project | undefined;
}

interface Poll {
  runner: Runner;
  info: RunnerInfo | undefined;
  take: boolean;
  resolve(taken: Taken | undefined): void;
  reject(err: unknown): void;
}

export class DispatchBatch {
  private queue: Poll[] = [];
  private scheduled = false;

  constructor(private readonly store: Transactions & { runners: RunnersPort; builds: BuildsPort; projects: ProjectsPort }) {}

  /**
   * Records the runner's contact and, when `take`, hands it the oldest pending build it may take.
   * Resolves once the batch's transaction has committed (undefined: nothing for this runner).
   */
  poll(runner: Runner, info: RunnerInfo | undefined, take: boolean): Promise<Taken | undefined> {
    return new Promise((resolve, reject) => {
      this.queue.push({ runner, info, take, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        // The check phase runs right after the poll phase that read this turn's requests.
        setImmediate(this.flush);
      }
    });
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    const polls = this.queue;
    this.queue = [];
    const { runners, builds, projects } = this.store;
    let results: (Taken | undefined)[];
    try {
      results = this.store.tx(() => {
        // Most builds of a batch share a project: each is read once, inside the same transaction.
        const projectsById = new Map<number, Project | undefined>();
        return polls.map((p) => {
          // Paused or deleted by a request that ran after this poll authenticated it.
          if (!runners.stillActive(p.runner)) return undefined;
          runners.touch(p.runner, p.info);
          const build = p.take ? builds.take(p.runner) : undefined;
          if (!build) return undefined;
          if (!projectsById.has(build.project_id)) projectsById.set(build.project_id, projects.byId(build.project_id));
          return { build, project: projectsById.get(build.project_id) };
        });
      });
    } catch (err) {
      for (const p of polls) p.reject(err);
      return;
    }
    polls.forEach((p, i) => p.resolve(results[i]));
  };
}

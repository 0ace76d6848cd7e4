// Sidekiq's processed and failed totals (a failed run counts as processed too). Durable jobs write
// what is unsaved with their own end; memory jobs only count here, saved now and then by a timer.
import type { JobCounters } from './types.ts';

export class Counters {
  private processed = 0;
  private failed = 0;
  private unsavedProcessed = 0;
  private unsavedFailed = 0;

  load(saved: JobCounters): void {
    this.processed = saved.processed;
    this.failed = saved.failed;
  }

  count(failed: boolean): void {
    this.processed++;
    this.unsavedProcessed++;
    if (failed) {
      this.failed++;
      this.unsavedFailed++;
    }
  }

  totals(): JobCounters {
    return { processed: this.processed, failed: this.failed };
  }

  unsaved(): JobCounters {
    return { processed: this.unsavedProcessed, failed: this.unsavedFailed };
  }

  hasUnsaved(): boolean {
    return this.unsavedProcessed !== 0 || this.unsavedFailed !== 0;
  }

  /** A write of `written` (marked saved before it was done) failed: those counts are unsaved again. */
  unsave(written: JobCounters): void {
    this.unsavedProcessed += written.processed;
    this.unsavedFailed += written.failed;
  }

  /** Call once `written` (a value unsaved() gave) is stored: jobs counted since stay unsaved. */
  saved(written: JobCounters): void {
    this.unsavedProcessed -= written.processed;
    this.unsavedFailed -= written.failed;
  }
}

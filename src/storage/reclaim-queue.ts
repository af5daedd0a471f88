// The queue behind every backend's background reclamation of deleted stores: one store at a time,
// in scheduling order, each scheduled once; a failure is kept in `lastError` (the tombstone stays,
// and the next open resumes it); `stop()` ends after the batch in flight. A backend supplies
// `reclaim(storeId)`, which checks `stopped` between its batches.

export abstract class ReclaimQueue {
  private readonly queue: string[] = [];
  private running: Promise<void> | undefined;
  protected stopped = false;
  /** The last failure; the store's tombstone stays and reclamation resumes at the next open. */
  lastError: unknown;

  /** Deletes one tombstoned store's data in batches, the tombstone last; returns early once `stopped`. */
  protected abstract reclaim(storeId: string): Promise<void>;

  schedule(storeId: string): void {
    if (this.stopped || this.queue.includes(storeId)) return;
    this.queue.push(storeId);
    this.running ??= this.drain().finally(() => (this.running = undefined));
  }

  /** Resolves when every scheduled store has been reclaimed (or reclamation stopped). */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Stops after the batch in flight; used by close(). */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.settled();
  }

  private async drain(): Promise<void> {
    for (let id = this.queue[0]; id !== undefined && !this.stopped; id = this.queue[0]) {
      try {
        await this.reclaim(id);
      } catch (err) {
        this.lastError = err;
      }
      this.queue.shift();
    }
  }
}

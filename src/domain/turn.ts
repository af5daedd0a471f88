// One turn of the event loop, for long work done in slices on a thread that also answers requests.

/**
 * Resolves after the I/O callbacks already pending (a request that arrived, a socket that drained)
 * have run: `setImmediate` runs after the poll phase. A slice of work between two of these holds
 * the thread for only that slice.
 */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Sections of work on a thread that go before other sliced work. While a section is open,
 * `turn()` (the other work's yield between slices) waits, after its turn of the event loop, until
 * every open section has closed; requests are not held (they never wait on the lane). The bulk
 * import opens one around a chunk's storage planning: that planning is on the store's write path
 * (the next chunk cannot be planned until this one is written), while the next chunk's validation
 * is not, and can run while LevelDB writes this one instead of stretching this one's planning;
 * the index's background merges yield the same way. A section must not wait on the work it holds
 * back (the planning never waits on validation or merges).
 */
export class PriorityLane {
  #open = 0;
  #waiting: (() => void)[] = [];

  /** Opens a section; the caller closes it (in a `finally`). */
  open(): void {
    this.#open++;
  }

  close(): void {
    if (this.#open === 0) throw new Error('PriorityLane.close without open');
    if (--this.#open > 0) return;
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const resume of waiting) resume();
  }

  /** True while a section is open. */
  get busy(): boolean {
    return this.#open > 0;
  }

  /** One turn of the event loop, then until no section is open. */
  readonly turn = async (): Promise<void> => {
    await nextTurn();
    while (this.#open > 0) await new Promise<void>((resume) => this.#waiting.push(resume));
  };
}

// One turn of the event loop, for long work done in slices on a thread that also answers requests.

/**
 * Resolves after the I/O callbacks already pending (a request that arrived, a socket that drained)
 * have run: `setImmediate` runs after the poll phase. A slice of work between two of these holds
 * the thread for only that slice.
 */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

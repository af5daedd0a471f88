// Shadow evaluation's sampling and its bounded queue (docs/changing-models.md): a request answered
// under model M on a store whose shadow is S ≠ M is sampled at the shadow's rate; a sampled one is
// queued with the index snapshot and instant it was answered at (pinned until its turn) and its
// answer, and the queue is drained after the answers are sent, a few milliseconds per event-loop
// turn, by the runner the wiring installs (commands/shadow-evaluation.ts). A full queue drops the
// job and counts it: the request path never waits for, nor allocates for, a shadow.

import { nextTurn } from '../../domain/turn.js';
import type { IndexSnapshot } from '../../index/snapshot.js';
import type { CheckInput, ListObjectsInput } from '../contract.js';
import type { ShadowRecords } from './shadow-records.js';
import type { ShadowSettings } from './shadow-settings.js';

interface JobBase {
  readonly storeId: string;
  readonly snapshot: IndexSnapshot;
  /** The request's instant (tuple expiry): the shadow answers at the same one. */
  readonly now: number;
  readonly modelId: string;
  readonly shadowModelId: string;
  /** When the request was answered (ms since the epoch). */
  readonly at: number;
}

/** A Check, or one BatchCheck item, and its answer. */
export interface ShadowCheckJob extends JobBase {
  readonly operation: 'check' | 'batch-check';
  readonly request: Pick<CheckInput, 'tupleKey' | 'contextualTuples' | 'context'>;
  readonly allowed: boolean;
}

/** A complete ListObjects answer (neither cut by the deadline nor by the result limit). */
export interface ShadowListJob extends JobBase {
  readonly operation: 'list-objects';
  readonly request: ListObjectsInput;
  readonly objects: readonly string[];
}

export type ShadowJob = ShadowCheckJob | ShadowListJob;

/** Time one drain turn may take before it yields to I/O. */
const SLICE_MS = 4;

export class ShadowQueue {
  /** Installed by the wiring: evaluates one job under its shadow model and records the outcome; never rejects. */
  runner: (job: ShadowJob) => Promise<void> | void = () => undefined;
  private readonly jobs: ShadowJob[] = [];
  private head = 0;
  private draining = false;
  private waiters: (() => void)[] = [];
  private closed = false;

  constructor(
    private readonly settings: ShadowSettings,
    private readonly records: ShadowRecords,
    private readonly capacity: number,
  ) {}

  /**
   * The shadow model a request of `storeId` answered under `modelId` is also evaluated under, or
   * undefined: no shadow, sampling 0, the request's own model, or not sampled this time.
   */
  sample(storeId: string, modelId: string): string | undefined {
    const s = this.settings.get(storeId);
    if (s === undefined || s.sampling === 0 || s.modelId === modelId) return undefined;
    if (s.sampling < 1 && Math.random() >= s.sampling) return undefined;
    return s.modelId;
  }

  /** Queues a sampled job (its snapshot pinned until evaluated), or drops and counts it when the queue is full. */
  offer(job: ShadowJob): void {
    if (this.closed || this.length >= this.capacity) {
      this.records.dropped(job.storeId, job.shadowModelId);
      return;
    }
    job.snapshot.pin();
    this.jobs.push(job);
    if (!this.draining) {
      this.draining = true;
      setImmediate(() => void this.drain());
    }
  }

  get length(): number {
    return this.jobs.length - this.head;
  }

  /** Resolves once every job queued so far has been evaluated (tests, tools). */
  idle(): Promise<void> {
    if (!this.draining) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Drops what is queued (unpinning it) and accepts nothing more. */
  close(): void {
    this.closed = true;
    while (this.length > 0) this.take().snapshot.unpin();
  }

  private take(): ShadowJob {
    const job = this.jobs[this.head] as ShadowJob;
    this.head++;
    if (this.head === this.jobs.length) {
      this.jobs.length = 0;
      this.head = 0;
    }
    return job;
  }

  private async drain(): Promise<void> {
    let start = Date.now();
    while (this.length > 0) {
      const job = this.take();
      try {
        await this.runner(job);
      } catch {
        this.records.failed();
      } finally {
        job.snapshot.unpin();
      }
      if (Date.now() - start >= SLICE_MS && this.length > 0) {
        await nextTurn();
        start = Date.now();
      }
    }
    this.draining = false;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}

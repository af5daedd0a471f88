// The process-wide shared WebAssembly.Memory and its allocator: every index, program and scratch
// area lives here so that every Piscina worker reads the same bytes. Only the main thread allocates.
//
// Contract: `alloc` returns a 16-byte aligned, zero-filled block; `Region`s are reference counted
// (the owner holds one reference, each published snapshot one more) and freed at zero. Views from
// `u32()`/`u8()` must be re-read after any allocation: `memory.grow()` replaces `memory.buffer`.

const PAGE = 65536;
/** Bytes below this are left to the wasm module (it has no data segment and no shadow stack). */
const HEAP_START = PAGE;
const MAX_PAGES = 65536;

// `let`: an HTTP thread adopts the main thread's memory (`adoptMemory`); importers see the live binding.
export let memory = new WebAssembly.Memory({ initial: 16, maximum: MAX_PAGES, shared: true });
/** True in a thread that adopted another thread's memory: it reads, never allocates. */
let reader = false;
/** Told the memory's new size after every grow (the HTTP threads' board publishes it). */
let onGrow: ((bytes: number) => void) | undefined;

let top = HEAP_START;
/**
 * The end of the highest block ever handed out: the memory above it was never written, so it
 * still holds the zeros `memory.grow` gave it, and the OS has not backed it with pages yet.
 */
let touched = HEAP_START;
/** Free blocks sorted by address, coalesced. */
const free: { ptr: number; size: number }[] = [];
let allocated = 0;

let u32View = new Uint32Array(memory.buffer);
let u8View = new Uint8Array(memory.buffer);

/**
 * Re-creates the views after a grow. Only this thread grows the memory (in `alloc`), so the views
 * are refreshed right there; reading `memory.buffer` per call would allocate a new
 * SharedArrayBuffer object every time (measured: ~60 ns per access).
 */
function refresh(): void {
  const buf = memory.buffer;
  u32View = new Uint32Array(buf);
  u8View = new Uint8Array(buf);
}

/**
 * Makes this thread read the memory `m` of the thread that allocates (an HTTP thread reading the
 * main thread's index): the views cover it and `alloc` refuses. Call before any view is read.
 */
export function adoptMemory(m: WebAssembly.Memory): void {
  memory = m;
  reader = true;
  refresh();
}

/**
 * A reader's views after the allocating thread grew the memory to `bytes` (read from wherever that
 * thread published it): re-created only when they are shorter, so a request pays one compare.
 */
export function syncViews(bytes: number): void {
  if (u8View.byteLength < bytes) refresh();
}

/** Sets the listener told the memory's size after every grow (one: the HTTP threads' board). */
export function setGrowListener(fn: ((bytes: number) => void) | undefined): void {
  onGrow = fn;
}

/** The memory's current size in bytes (as this thread's views see it). */
export function memoryBytes(): number {
  return u8View.byteLength;
}

/** The current u32 view of the whole memory (call again after any allocation). */
export function u32(): Uint32Array {
  return u32View;
}
export function u8(): Uint8Array {
  return u8View;
}

function round(n: number): number {
  return (Math.max(n, 16) + 15) & ~15;
}

/**
 * A block of at least `bytes` bytes, zero-filled unless `zero` is false (for callers that write
 * every byte). Throws RangeError when memory is exhausted.
 */
function alloc(bytes: number, zero = true): number {
  if (reader) throw new Error('latch: only the main thread allocates in the shared index memory');
  const size = round(bytes);
  if (size <= SMALL) {
    const bin = bins.get(size);
    const ptr = bin?.pop();
    if (ptr !== undefined) {
      if (zero) u8().fill(0, ptr, ptr + size);
      allocated += size;
      return ptr;
    }
  }
  for (let i = 0; i < free.length; i++) {
    const b = free[i];
    if (b === undefined || b.size < size) continue;
    const ptr = b.ptr;
    if (b.size === size) free.splice(i, 1);
    else {
      b.ptr += size;
      b.size -= size;
    }
    if (zero) u8().fill(0, ptr, ptr + size);
    allocated += size;
    return ptr;
  }
  const ptr = top;
  const end = ptr + size;
  if (end > u8View.byteLength) {
    const need = Math.ceil((end - u8View.byteLength) / PAGE);
    const cur = u8View.byteLength / PAGE;
    const grow = Math.min(Math.max(need, cur >> 2), MAX_PAGES - cur);
    if (grow < need) throw new RangeError('latch: shared index memory exhausted (4 GiB)');
    memory.grow(grow);
    refresh();
    onGrow?.(u8View.byteLength);
  }
  top = end;
  allocated += size;
  // Only what was used before `top` last shrank needs zeros: filling the rest would make the OS
  // back pages a block may never write (a walker scratch area's memo table: 512 KB, most of it
  // untouched by a light load).
  if (zero && ptr < touched) u8().fill(0, ptr, Math.min(end, touched));
  if (end > touched) touched = end;
  return ptr;
}

/**
 * Small blocks (snapshot headers, small overlays, scratch-sized records) are recycled through
 * exact-size bins: O(1) instead of a walk of the address-ordered free list, which fragments
 * when a snapshot is published per write. Bins never coalesce; their total is bounded by the
 * peak number of live small blocks.
 */
const SMALL = 64 * 1024;
const bins = new Map<number, number[]>();

/** Returns a block to the free list (coalescing neighbours; shrinking `top` when it was last). */
function release(ptr: number, bytes: number): void {
  const size = round(bytes);
  allocated -= size;
  if (size <= SMALL) {
    let bin = bins.get(size);
    if (!bin) bins.set(size, (bin = []));
    bin.push(ptr);
    return;
  }
  if (ptr + size === top) {
    top = ptr;
    const last = free[free.length - 1];
    if (last && last.ptr + last.size === top) {
      top = last.ptr;
      free.pop();
    }
    return;
  }
  let i = 0;
  while (i < free.length && (free[i]?.ptr ?? 0) < ptr) i++;
  free.splice(i, 0, { ptr, size });
  const next = free[i + 1];
  const cur = free[i];
  if (cur && next && cur.ptr + cur.size === next.ptr) {
    cur.size += next.size;
    free.splice(i + 1, 1);
  }
  const prev = free[i - 1];
  if (cur && prev && prev.ptr + prev.size === cur.ptr) {
    prev.size += cur.size;
    free.splice(i, 1);
  }
}

/** Bytes currently allocated in the shared memory (for benchmarks). */
export function allocatedBytes(): number {
  return allocated;
}

/** A reference-counted block. The creator holds the first reference. */
export class Region {
  readonly ptr: number;
  readonly size: number;
  private refs = 1;
  constructor(size: number, zero = true) {
    this.size = size;
    this.ptr = alloc(size, zero);
  }
  retain(): this {
    this.refs++;
    return this;
  }
  /** Drops one reference; the block returns to the allocator at zero. */
  drop(): void {
    if (this.refs <= 0) return;
    if (--this.refs === 0) release(this.ptr, this.size);
  }
  get alive(): boolean {
    return this.refs > 0;
  }
}

/** One owner's references on a set of regions, released at most once. */
export class Hold {
  private done = false;
  constructor(private readonly regions: readonly Region[]) {
    for (const r of regions) r.retain();
  }
  release(): void {
    if (this.done) return;
    this.done = true;
    for (const r of this.regions) r.drop();
  }
  get released(): boolean {
    return this.done;
  }
}

/**
 * A safety net: the regions of an object are also released when it is collected. It is not the
 * primary mechanism — shared memory is invisible to V8's heap accounting, so collection can lag
 * gigabytes behind — snapshots are retired explicitly (IndexSnapshot.retire).
 */
const registry = new FinalizationRegistry<Hold>((h) => h.release());

export function holdUntilCollected(owner: object, regions: Region[]): Hold {
  const h = new Hold(regions);
  registry.register(owner, h);
  return h;
}

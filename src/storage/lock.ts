// Exclusive use of a data directory: LevelDB's own LOCK file does the locking; this module adds
// a pid file so that a second latch process fails fast with a message naming the holder.

import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const PID_FILE = 'LATCH_PID';

/** Thrown by openLevelStorage when another process holds the directory. */
export class DataDirectoryInUseError extends Error {
  constructor(
    readonly path: string,
    readonly pid: number | undefined,
  ) {
    super(`data directory ${path} is in use by another latch process (pid ${pid ?? 'unknown'})`);
    this.name = 'DataDirectoryInUseError';
  }
}

function codeOf(err: unknown): unknown {
  return typeof err === 'object' && err !== null && 'code' in err ? err.code : undefined;
}

/** classic-level reports a held lock as LEVEL_DATABASE_NOT_OPEN caused by LEVEL_LOCKED. */
export function isLockedError(err: unknown): boolean {
  if (codeOf(err) === 'LEVEL_LOCKED') return true;
  const cause = typeof err === 'object' && err !== null && 'cause' in err ? err.cause : undefined;
  return codeOf(err) === 'LEVEL_DATABASE_NOT_OPEN' && codeOf(cause) === 'LEVEL_LOCKED';
}

export async function readHolderPid(dir: string): Promise<number | undefined> {
  try {
    const pid = Number.parseInt(await readFile(join(dir, PID_FILE), 'utf8'), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Records this process as the holder; call only while holding LevelDB's lock. */
export async function writeHolderPid(dir: string): Promise<void> {
  await writeFile(join(dir, PID_FILE), `${process.pid}\n`);
}

/** Removes the pid file if it still names this process. */
export async function clearHolderPid(dir: string): Promise<void> {
  if ((await readHolderPid(dir)) === process.pid) await rm(join(dir, PID_FILE), { force: true });
}

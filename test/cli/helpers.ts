// Runs latch commands in-process with captured stdout/stderr, as `latch <argv…>` would.

import { runCli } from '../../src/cli/commands.js';
import type { CliIo } from '../../src/cli/common.js';

export interface Run {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

export async function latch(argv: readonly string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  let out = '';
  let err = '';
  const io: CliIo = { out: (t) => void (out += t), err: (t) => void (err += t), env, errIsTTY: false };
  const code = await runCli(argv, io);
  return { code, out, err };
}

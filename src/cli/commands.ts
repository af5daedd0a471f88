// The registry of latch's tool commands (everything except `serve`, which src/cli/main.ts owns)
// and the one place that turns a command's outcome into an exit code: 0 success, 1 failure
// (message on stderr), 2 usage error (what is wrong, and where to find the help).

import { Args, helpText, parseArgs, UsageError, wantsHelp } from './args.js';
import { benchCommand } from './bench-cmd.js';
import { changesCommand } from './changes-cmd.js';
import { decisionCommands } from './decisions-cmd.js';
import { devPostgresCommand } from './dev-postgres-cmd.js';
import { clientCommands } from './client-cmd.js';
import { clusterCommands } from './cluster-cmd.js';
import { indexCommands } from './index-cmd.js';
import { migrateCommand } from './migrate-cmd.js';
import { type CliIo, type Command, describeError, processIo } from './common.js';
import { modelCommands } from './model-cmd.js';
import { queryCommands } from './query-cmd.js';
import { reviewCommand } from './review-cmd.js';
import { storeCommands } from './store-cmd.js';
import { testCommand } from './test-cmd.js';
import { tupleCommands } from './tuple-cmd.js';

interface Group {
  readonly summary: string;
  readonly commands: readonly Command[];
}

const GROUPS: Record<string, Group> = {
  store: { summary: 'Create, list, inspect, delete, import and export stores', commands: storeCommands },
  model: {
    summary: 'Write, read, list, validate, transform and diff models; the impact of a candidate',
    commands: modelCommands,
  },
  tuple: { summary: 'Write, delete, read and import relationship tuples', commands: tupleCommands },
  query: { summary: 'Check, batch-check, list objects/users/relations, expand', commands: queryCommands },
  index: { summary: "Create, list, inspect, delete and watch a store's permission indexes", commands: indexCommands },
  decisions: {
    summary: "Export, explain and sample a store's recorded decisions (docs/audit.md)",
    commands: decisionCommands,
  },
  client: {
    summary: "Manage the built-in token issuer's OAuth clients (--api-url: a running server)",
    commands: clientCommands,
  },
  cluster: {
    summary: 'Nodes placed across a cluster (--placement): status, drain (--postgres-url)',
    commands: clusterCommands,
  },
};

/**
 * One-word commands. A new command is one entry here (or in GROUPS for a `group sub` command):
 * the top-level help, dispatch, `--help` and the docs check (test/cli/docs-commands.test.ts)
 * follow from it.
 */
const SINGLE: Record<string, Command> = {
  test: testCommand,
  bench: benchCommand,
  migrate: migrateCommand,
  changes: changesCommand,
  review: reviewCommand,
  'dev-postgres': devPostgresCommand,
};

/** The lines the top-level help shows for these commands. */
export const TOOL_COMMANDS_HELP = [
  ...Object.values(SINGLE).map((c) => `  ${c.spec.path.padEnd(14)}${c.spec.summary}`),
  ...Object.entries(GROUPS).map(([name, g]) => `  ${name.padEnd(14)}${g.summary}`),
].join('\n');

/** True when `name` is a command this module runs. */
export function isToolCommand(name: string): boolean {
  return name in SINGLE || name in GROUPS;
}

/** The command `argv` names (`['tuple', 'write', …]`) and the arguments that follow it. */
export function findCommand(argv: readonly string[]): { command: Command; rest: readonly string[] } | undefined {
  const [name = '', sub, ...subRest] = argv;
  const single = SINGLE[name];
  if (single) return { command: single, rest: argv.slice(1) };
  const group = GROUPS[name];
  return group ? subCommand(group, name, sub, subRest) : undefined;
}

/** The group's command named by `sub` (`model impact`), or by `sub` and the next word (`model shadow set`). */
function subCommand(
  group: Group,
  name: string,
  sub: string | undefined,
  rest: readonly string[],
): { command: Command; rest: readonly string[] } | undefined {
  const three = group.commands.find((c) => c.spec.path === `${name} ${sub} ${rest[0]}`);
  if (three) return { command: three, rest: rest.slice(1) };
  const two = group.commands.find((c) => c.spec.path === `${name} ${sub}`);
  return two ? { command: two, rest } : undefined;
}

/** Runs `latch <argv…>` for a tool command; returns the exit code. */
export async function runCli(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  const [name = '', ...rest] = argv;
  const single = SINGLE[name];
  if (single) return runCommand(single, rest, io);
  const group = GROUPS[name];
  if (!group) {
    io.err(`latch: unknown command '${name}'\n`);
    return 2;
  }
  const [sub, ...subRest] = rest;
  const groupHelp = `Usage: latch ${name} <command> [options]\n\n${group.summary}.\n\nCommands:\n${group.commands
    .map((c) => `  ${c.spec.path.split(' ').slice(1).join(' ').padEnd(16)}${c.spec.summary}`)
    .join('\n')}\n\nRun 'latch ${name} <command> --help' for a command's options.\n`;
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    (sub === undefined ? io.err : io.out)(groupHelp);
    return sub === undefined ? 2 : 0;
  }
  const found = subCommand(group, name, sub, subRest);
  if (!found) {
    io.err(`latch ${name}: unknown command '${sub}'\n\n${groupHelp}`);
    return 2;
  }
  return runCommand(found.command, found.rest, io);
}

async function runCommand(command: Command, argv: readonly string[], io: CliIo): Promise<number> {
  const path = command.spec.path;
  if (wantsHelp(argv)) {
    io.out(helpText(command.spec));
    return 0;
  }
  let args: Args;
  try {
    args = parseArgs(command.spec, argv, io.env);
  } catch (err) {
    return usage(io, path, err);
  }
  try {
    return await command.run(args, io);
  } catch (err) {
    if (err instanceof UsageError) return usage(io, path, err);
    io.err(`latch ${path}: ${describeError(err)}\n`);
    return 1;
  }
}

function usage(io: CliIo, path: string, err: unknown): number {
  if (!(err instanceof UsageError)) throw err;
  io.err(`latch ${path}: ${err.message}\nRun 'latch ${path} --help' for usage.\n`);
  return 2;
}

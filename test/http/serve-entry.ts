// Runs the CLI from source the way bin/latch.js runs it from dist/ (used by serve.test.ts).
import { main } from '../../src/cli/main.js';

process.exitCode = await main(process.argv.slice(2));

#!/usr/bin/env node
// The `latch` command: runs the compiled CLI from dist/ (build first with `npm run build`).
import('../dist/src/cli/main.js')
  .then((m) => m.main(process.argv.slice(2)))
  .then((code) => {
    if (typeof code === 'number') process.exitCode = code;
  })
  .catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  });

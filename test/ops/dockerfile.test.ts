// deploy/Dockerfile, linted without a Docker engine (none runs where latch is tested, and
// hadolint is not packaged for Debian 12): the properties the image promises in
// docs/deployment.md, plus the hadolint rules that apply to it (pinned base images, exec-form
// ENTRYPOINT/CMD/HEALTHCHECK, COPY over ADD, WORKDIR over `cd`, a non-root last USER).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';

const root = join(import.meta.dirname, '../..');

interface Instruction {
  readonly op: string;
  readonly args: string;
}

/** The instructions, with `\` continuations joined and comments dropped. */
function instructions(text: string): Instruction[] {
  const joined = text.replace(/\\\n/g, ' ');
  return joined
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const m = /^(\S+)\s*(.*)$/.exec(l) as RegExpExecArray;
      return { op: (m[1] as string).toUpperCase(), args: m[2] as string };
    });
}

const file = instructions(readFileSync(join(root, 'deploy/Dockerfile'), 'utf8'));
const all = (op: string): Instruction[] => file.filter((i) => i.op === op);
const final = file.slice(file.map((i) => i.op).lastIndexOf('FROM'));

test('.dockerignore keeps node_modules, data/ and .git out of the build context', () => {
  const ignored = readFileSync(join(root, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  for (const entry of ['node_modules', 'data', '.git']) expect(ignored).toContain(entry);
});

test('the final image runs as a user other than root', () => {
  const users = final.filter((i) => i.op === 'USER').map((i) => i.args);
  expect(users.length).toBeGreaterThan(0);
  expect(users.at(-1)).not.toMatch(/^(root|0)(:|$)/);
  // The user comes before what it runs.
  const at = (op: string): number => final.findIndex((i) => i.op === op);
  expect(final.map((i) => i.op).lastIndexOf('USER')).toBeLessThan(at('ENTRYPOINT'));
});

test('the health check asks /healthz on the configured port (LATCH_PORT), not a fixed one', () => {
  const [health] = all('HEALTHCHECK');
  expect(health?.args).toMatch(/CMD \[/);
  expect(health?.args).toContain('process.env.LATCH_PORT');
  expect(health?.args).toContain('/healthz');
  expect(
    all('ENV')
      .map((e) => e.args)
      .join(' '),
  ).toMatch(/LATCH_PORT=8080/);
  expect(all('EXPOSE').map((e) => e.args)).toEqual(['8080']);
});

test('hadolint rules: pinned bases, exec form, COPY not ADD, no cd in RUN, npm ci', () => {
  for (const from of all('FROM')) expect(from.args).toMatch(/^[\w./-]+:[\w.-]+(@sha256:[0-9a-f]+)?( AS \w+)?$/i); // DL3006/DL3007
  for (const from of all('FROM')) expect(from.args).not.toMatch(/:latest\b/);
  for (const op of ['ENTRYPOINT', 'CMD']) for (const i of all(op)) expect(() => JSON.parse(i.args)).not.toThrow(); // DL3025
  expect(all('ADD')).toEqual([]); // DL3020
  for (const run of all('RUN')) expect(run.args).not.toMatch(/(^|&&|;)\s*cd\s/); // DL3003
  for (const run of all('RUN')) expect(run.args).not.toMatch(/npm install(?! -g)/); // reproducible: npm ci
  expect(all('STOPSIGNAL').map((i) => i.args)).toEqual(['SIGTERM']);
});

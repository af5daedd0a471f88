// The playground's static files (docs/playground.md): read once from the built folder into
// memory with their gzip and brotli forms (precompressed by the build, else compressed here once),
// and served at /playground with content types, caching headers and a strict CSP. These routes are
// separate uWS routes: nothing on the API's request path changes when they are mounted.

import { statusLine } from './status-line.js';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import type { HttpRequest, HttpResponse, TemplatedApp } from './uws.js';

/** The URL prefix of the playground. */
const PLAYGROUND_PATH = '/playground';

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json',
  '.woff2': 'font/woff2',
};

/**
 * Everything the page may load comes from this origin: no CDN, font or analytics request can leave
 * the machine even by mistake. `connect-src 'self'` covers the API calls on the same port. Scripts
 * are the origin's files and the inline scripts of index.html named by their hash (below), so no
 * other inline script can run.
 */
function csp(scriptHashes: readonly string[]): string {
  const scripts = ["'self'", ...scriptHashes.map((h) => `'sha256-${h}'`)].join(' ');
  return `default-src 'self'; script-src ${scripts}; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'`;
}

/** The base64 SHA-256 of each inline `<script>` of an HTML page, as a CSP source hashes it. */
function inlineScriptHashes(html: string): string[] {
  const out: string[] = [];
  for (const m of html.matchAll(/<script>([\s\S]*?)<\/script>/g))
    out.push(
      createHash('sha256')
        .update(m[1] ?? '', 'utf8')
        .digest('base64'),
    );
  return out;
}

/** Below this size compression is not worth a header. */
const MIN_COMPRESS = 512;

interface StaticFile {
  readonly type: string;
  /** `"sha256-prefix"`, strong ETag of the raw bytes. */
  readonly etag: string;
  readonly cacheControl: string;
  readonly raw: Buffer;
  readonly gzip?: Buffer | undefined;
  readonly br?: Buffer | undefined;
}

/** The built playground's folder in this package (`dist/playground`), found from this file upwards. */
export function defaultPlaygroundDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    if (existsSync(join(dir, 'package.json'))) return join(dir, 'dist', 'playground');
    dir = dirname(dir);
  }
  return join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'playground');
}

function* walk(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* walk(path);
    else yield path;
  }
}

function compressed(path: string, raw: Buffer, ext: '.gz' | '.br'): Buffer | undefined {
  if (raw.length < MIN_COMPRESS) return undefined;
  if (existsSync(path + ext)) return readFileSync(path + ext);
  return ext === '.gz'
    ? gzipSync(raw, { level: 9 })
    : brotliCompressSync(raw, {
        params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: raw.length },
      });
}

/**
 * Loads every built file by URL path (`/playground/assets/index-3f2a.js`). Files under `assets/`
 * carry a content hash in their name and are immutable; everything else must be revalidated.
 * Throws when the folder has no index.html (the playground was not built).
 */
export function loadStaticFiles(dir: string): Map<string, StaticFile> {
  if (!existsSync(join(dir, 'index.html')))
    throw new Error(`the playground is not built: ${join(dir, 'index.html')} is missing (run npm run build)`);
  const files = new Map<string, StaticFile>();
  for (const path of walk(dir)) {
    const ext = extname(path);
    if (ext === '.gz' || ext === '.br') continue;
    const url = PLAYGROUND_PATH + '/' + relative(dir, path).split(sep).join('/');
    const raw = readFileSync(path);
    const type = TYPES[ext] ?? 'application/octet-stream';
    const hashed = url.startsWith(`${PLAYGROUND_PATH}/assets/`);
    files.set(url, {
      type,
      etag: `"${createHash('sha256').update(raw).digest('base64url').slice(0, 22)}"`,
      cacheControl: hashed ? 'public, max-age=31536000, immutable' : 'no-cache',
      raw,
      gzip: compressed(path, raw, '.gz'),
      br: compressed(path, raw, '.br'),
    });
  }
  return files;
}

/** The best encoding the client accepts: brotli, then gzip, else the raw bytes. */
function pickEncoding(file: StaticFile, acceptEncoding: string): ['br' | 'gzip' | undefined, Buffer] {
  if (file.br && /\bbr\b/.test(acceptEncoding)) return ['br', file.br];
  if (file.gzip && /\bgzip\b/.test(acceptEncoding)) return ['gzip', file.gzip];
  return [undefined, file.raw];
}

function send(res: HttpResponse, req: HttpRequest, file: StaticFile | undefined, head: boolean, policy: string): void {
  if (!file) {
    res.cork(() =>
      res
        .writeStatus(statusLine(404))
        .writeHeader('Content-Type', 'text/plain; charset=utf-8')
        .writeHeader('Cache-Control', 'no-cache')
        .end('Not Found'),
    );
    return;
  }
  const notModified = req.getHeader('if-none-match') === file.etag;
  const [encoding, body] = pickEncoding(file, req.getHeader('accept-encoding'));
  res.cork(() => {
    res
      .writeStatus(statusLine(notModified ? 304 : 200))
      .writeHeader('Content-Type', file.type)
      .writeHeader('Cache-Control', file.cacheControl)
      .writeHeader('ETag', file.etag)
      .writeHeader('Vary', 'Accept-Encoding')
      .writeHeader('X-Content-Type-Options', 'nosniff')
      .writeHeader('Referrer-Policy', 'no-referrer')
      .writeHeader('Content-Security-Policy', policy);
    if (encoding && !notModified) res.writeHeader('Content-Encoding', encoding);
    if (notModified) res.endWithoutBody(0);
    // HEAD: headers only, without Content-Length (optional for HEAD). This uWS build aborts the
    // process on endWithoutBody with a non-zero length, and adds its own `Content-Length: 0` to a
    // hand-written one on end().
    else if (head) res.endWithoutBody();
    else res.end(body);
  });
}

/**
 * Mounts GET/HEAD /playground and /playground/* on `app`. Any path under the prefix that is not a
 * file and has no extension gets index.html (the app reads its own location).
 */
export function mountPlayground(app: TemplatedApp, files: ReadonlyMap<string, StaticFile>): void {
  const index = files.get(`${PLAYGROUND_PATH}/index.html`);
  const policy = csp(inlineScriptHashes(index?.raw.toString('utf8') ?? ''));
  const lookup = (url: string): StaticFile | undefined => {
    const hit = files.get(url);
    if (hit) return hit;
    return extname(url) === '' ? index : undefined;
  };
  for (const pattern of [PLAYGROUND_PATH, `${PLAYGROUND_PATH}/*`]) {
    app.get(pattern, (res, req) => send(res, req, lookup(req.getUrl()), false, policy));
    app.head(pattern, (res, req) => send(res, req, lookup(req.getUrl()), true, policy));
  }
}

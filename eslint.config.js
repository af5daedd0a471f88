// Lint rules: typed TypeScript, no `any`, and the one-way import direction of docs/architecture.md.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Folders a layer may not import from (http → api → engine → index → storage; leaves import no layer). */
const forbidden = {
  'src/storage': ['http', 'api', 'engine', 'index', 'cli'],
  'src/index': ['http', 'api', 'engine', 'cli'],
  'src/engine': ['http', 'api', 'cli'],
  // Placement across nodes: drives the engine (its contract) over the storage's registry; the HTTP edge asks it.
  'src/cluster': ['http', 'api', 'index', 'cli'],
  'src/api': ['http', 'cli'],
  'src/model': ['http', 'api', 'engine', 'index', 'storage', 'cli'],
  'src/domain': ['http', 'api', 'engine', 'index', 'storage', 'model', 'cli', 'client'],
  // The channel client (`latch/client`) ships alone: it may import only src/domain (msgpack, limits).
  'src/client': ['http', 'api', 'engine', 'index', 'storage', 'model', 'cli'],
};

/** Third-party libraries with one importing folder (docs/architecture.md): `pg` only in src/storage/postgres/. */
const ownedImports = [{ name: 'pg', message: 'only src/storage/postgres/ imports pg (the PostgreSQL datastore)' }];

const layerPatterns = (bans) =>
  bans.map((b) => ({
    group: [`**/${b}/*`, `../${b}/*`, `../../${b}/*`],
    message: `src/${b} may not be imported here (one-way imports)`,
  }));

const layerRules = [
  // Folders without a layer rule still may not import an owned library.
  { files: ['src/**/*.ts'], rules: { 'no-restricted-imports': ['error', { paths: ownedImports }] } },
  ...Object.entries(forbidden).map(([dir, bans]) => ({
    files: [`${dir}/**/*.ts`],
    rules: { 'no-restricted-imports': ['error', { paths: ownedImports, patterns: layerPatterns(bans) }] },
  })),
  {
    files: ['src/storage/postgres/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: layerPatterns(forbidden['src/storage']) }] },
  },
];

/**
 * Directions inside the engine (docs/architecture.md "The engine"): commands use state and
 * evaluation; state and evaluation never import each other; permission indexes use both; only the
 * facade and the wiring (service.ts, wiring.ts) import everything, and nothing imports them. The
 * contract and the config import only src/domain and src/errors (the config also the contract).
 */
const engineBans = {
  'src/engine/commands': [],
  'src/engine/state': ['commands', 'evaluation', 'permission-index'],
  'src/engine/evaluation': ['commands', 'state', 'permission-index'],
  'src/engine/permission-index': ['commands'],
};
const facadeBan = {
  group: [
    '**/engine/service.js',
    '**/engine/wiring.js',
    '../service.js',
    '../wiring.js',
    '../../service.js',
    '../../wiring.js',
  ],
  message: 'only embedders and the edges import the facade (src/engine/service.ts, wiring.ts)',
};
const enginePatterns = (bans) =>
  bans.map((b) => ({
    group: [`../${b}/*`, `../../${b}/*`, `../../${b}/**`],
    message: `src/engine/${b} may not be imported here (engine directions, docs/architecture.md)`,
  }));
const engineRules = [
  ...Object.entries(engineBans).map(([dir, bans]) => ({
    files: [`${dir}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: ownedImports,
          patterns: [...layerPatterns(forbidden['src/engine']), ...enginePatterns(bans), facadeBan],
        },
      ],
    },
  })),
  {
    files: ['src/engine/contract.ts', 'src/engine/config.ts', 'src/engine/stats.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../*', '!../domain', '../domain/*/**', '!../errors.js', './*', '!./contract.js', '!./contract'],
              message: 'the contract and the config import only src/domain, src/errors and the contract',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/engine/contract/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../*', '!../..', '../../*', '!../../domain', '../../domain/*/**', '!../../errors.js'],
              message: 'the contract imports only src/domain, src/errors and its own parts',
            },
          ],
        },
      ],
    },
  },
];
/** Leaf modules at the top of src/ that every layer may import and that import no layer. */
const leafFiles = ['src/log.ts', 'src/errors.ts', 'src/abi.ts'];

const leafRules = {
  files: leafFiles,
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: ['http', 'api', 'engine', 'index', 'storage', 'model', 'cli', 'client', 'domain'].map((b) => ({
          group: [`./${b}/*`],
          message: 'src/log.ts, src/errors.ts and src/abi.ts are leaves: they import no layer',
        })),
      },
    ],
  },
};

/** One logger (src/log.ts): no other server code writes to stderr or emits process warnings. */
const oneLogger = {
  files: ['src/**/*.ts'],
  ignores: ['src/log.ts', 'src/cli/**'],
  rules: {
    'no-console': 'error',
    'no-restricted-syntax': [
      'error',
      {
        selector: "MemberExpression[object.object.name='process'][object.property.name='stderr']",
        message: 'log through src/log.ts (it honours --log-format and --log-level)',
      },
      {
        selector: "MemberExpression[object.name='process'][property.name='emitWarning']",
        message: 'log through src/log.ts (it honours --log-format and --log-level)',
      },
    ],
  },
};

export default tseslint.config(
  { ignores: ['dist/**', 'build/**', 'node_modules/**', 'assembly/**', 'data/**', 'coverage/**', '.tmp/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['bin/**/*.js', '*.js', 'scripts/**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
  ...layerRules,
  ...engineRules,
  leafRules,
  oneLogger,
);

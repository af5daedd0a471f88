// The one argument parser of the latch command line (no dependency). A command declares its
// positionals and flags once; the same declaration parses argv, fills values from `LATCH_…`
// environment variables and renders `--help`. Every mistake (unknown flag, missing value, missing
// argument, bad number, value outside its choices) is a UsageError, which the dispatcher turns
// into a message on stderr and exit code 2.

export class UsageError extends Error {}

type FlagKind = 'string' | 'boolean' | 'integer' | 'list';

export interface FlagSpec {
  /** Long name without dashes: `api-url`. */
  readonly name: string;
  readonly kind: FlagKind;
  readonly help: string;
  /** One letter: `-o`. */
  readonly short?: string;
  /** Environment variable consulted when the flag is absent. */
  readonly env?: string;
  /** Shown in help; applied by the command (not by the parser), so `has()` stays truthful. */
  readonly default?: string;
  /** Placeholder in help, e.g. `<url>`. */
  readonly value?: string;
  readonly choices?: readonly string[];
  readonly min?: number;
}

interface PositionalSpec {
  readonly name: string;
  readonly help: string;
  readonly optional?: boolean;
  /** Takes every remaining argument (at least one unless optional). */
  readonly variadic?: boolean;
}

export interface CommandSpec {
  /** `store get`, `test`, … (what follows `latch`). */
  readonly path: string;
  readonly summary: string;
  readonly positionals: readonly PositionalSpec[];
  readonly flags: readonly FlagSpec[];
  readonly details?: string;
  readonly examples?: readonly string[];
}

/** Parsed arguments; accessors throw UsageError for missing required values. */
export class Args {
  constructor(
    readonly positionals: ReadonlyMap<string, string[]>,
    private readonly values: ReadonlyMap<string, string[]>,
    /** The flags given on the command line (the others came from the environment, if at all). */
    private readonly given: ReadonlySet<string> = new Set(values.keys()),
  ) {}

  has(name: string): boolean {
    return this.values.has(name);
  }

  /** True when the flag was on the command line (not filled from its environment variable). */
  onCommandLine(name: string): boolean {
    return this.given.has(name);
  }

  string(name: string): string | undefined {
    const v = this.values.get(name);
    return v === undefined ? undefined : v[v.length - 1];
  }

  require(name: string, why = ''): string {
    const v = this.string(name);
    if (v === undefined) throw new UsageError(`missing --${name}${why ? ` (${why})` : ''}`);
    return v;
  }

  bool(name: string): boolean {
    return this.string(name) === 'true';
  }

  int(name: string): number | undefined {
    const v = this.string(name);
    return v === undefined ? undefined : Number(v);
  }

  list(name: string): string[] {
    return [...(this.values.get(name) ?? [])];
  }

  /** The single value of a positional (undefined when optional and absent). */
  arg(name: string): string | undefined {
    return this.positionals.get(name)?.[0];
  }

  args(name: string): string[] {
    return [...(this.positionals.get(name) ?? [])];
  }
}

/** The help flag, accepted by every command. */
const HELP_FLAG: FlagSpec = { name: 'help', short: 'h', kind: 'boolean', help: 'Show this help' };

/** True when argv asks for help (before a `--` terminator). */
export function wantsHelp(argv: readonly string[]): boolean {
  for (const a of argv) {
    if (a === '--') return false;
    if (a === '--help' || a === '-h') return true;
  }
  return false;
}

/**
 * Parses `--flag value`, `--flag=value`, `-f value`, boolean `--flag` (also `--flag true|false` and
 * `--flag=true|false`), repeated list flags, and positionals (anything after `--` is positional). Environment variables fill absent flags.
 */
export function parseArgs(
  spec: CommandSpec,
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>> = {},
): Args {
  const flags = [...spec.flags, HELP_FLAG];
  const byName = new Map(flags.map((f) => [f.name, f]));
  const byShort = new Map(flags.filter((f) => f.short !== undefined).map((f) => [f.short as string, f]));
  const values = new Map<string, string[]>();
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '--') {
      rest.push(...argv.slice(i + 1));
      break;
    }
    if (!a.startsWith('-') || a === '-' || /^-\d/.test(a)) {
      rest.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const key = eq === -1 ? a : a.slice(0, eq);
    const flag = key.startsWith('--') ? byName.get(key.slice(2)) : byShort.get(key.slice(1));
    if (flag === undefined) throw new UsageError(`unknown option '${key}'`);
    let value: string | undefined;
    if (flag.kind === 'boolean') {
      // `--flag`, `--flag=false` and `--flag false` (the next word, when it is exactly true/false).
      const next = argv[i + 1];
      value = eq !== -1 ? a.slice(eq + 1) : next === 'true' || next === 'false' ? (i++, next) : 'true';
      if (value !== 'true' && value !== 'false')
        throw new UsageError(`--${flag.name} takes no value (or true/false), got '${value}'`);
    } else {
      value = eq === -1 ? argv[++i] : a.slice(eq + 1);
      if (value === undefined || (eq === -1 && value.startsWith('--')))
        throw new UsageError(`option --${flag.name} needs a value`);
    }
    values.set(flag.name, [...(flag.kind === 'list' ? (values.get(flag.name) ?? []) : []), checkValue(flag, value)]);
  }
  const given = new Set(values.keys());
  for (const f of flags) {
    const fromEnv = f.env === undefined ? undefined : env[f.env];
    if (!values.has(f.name) && fromEnv !== undefined && fromEnv !== '')
      values.set(f.name, [checkValue(f, fromEnv, f.env)]);
  }
  return new Args(assignPositionals(spec, rest), values, given);
}

function checkValue(flag: FlagSpec, value: string, source = `--${flag.name}`): string {
  if (flag.kind === 'integer') {
    const min = flag.min ?? 0;
    if (!/^-?\d+$/.test(value) || Number(value) < min || !Number.isSafeInteger(Number(value))) {
      throw new UsageError(`${source} must be an integer ≥ ${min}, got '${value}'`);
    }
  }
  if (flag.choices !== undefined && !flag.choices.includes(value)) {
    throw new UsageError(`${source} must be one of ${flag.choices.join(', ')}; got '${value}'`);
  }
  return value;
}

function assignPositionals(spec: CommandSpec, rest: string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let i = 0;
  for (const p of spec.positionals) {
    if (p.variadic) {
      const taken = rest.slice(i);
      i = rest.length;
      if (taken.length === 0 && !p.optional) throw new UsageError(`missing argument <${p.name}>`);
      out.set(p.name, taken);
      continue;
    }
    const v = rest[i];
    if (v === undefined) {
      if (!p.optional) throw new UsageError(`missing argument <${p.name}>`);
      continue;
    }
    out.set(p.name, [v]);
    i++;
  }
  if (i < rest.length) throw new UsageError(`unexpected argument '${rest[i]}'`);
  return out;
}

/** The `--help` text of a command. */
export function helpText(spec: CommandSpec): string {
  const pos = spec.positionals.map((p) => {
    const n = `<${p.name}>${p.variadic ? '...' : ''}`;
    return p.optional ? `[${n}]` : n;
  });
  const lines = [`Usage: latch ${spec.path} [options]${pos.length ? ' ' + pos.join(' ') : ''}`, '', spec.summary];
  if (spec.details) lines.push('', spec.details.trimEnd());
  if (spec.positionals.length) {
    lines.push('', 'Arguments:');
    for (const p of spec.positionals) lines.push(row(`<${p.name}>`, p.help));
  }
  lines.push('', 'Options:');
  for (const f of [...spec.flags, HELP_FLAG]) {
    const left = `${f.short ? `-${f.short}, ` : '    '}--${f.name}${f.kind === 'boolean' ? '' : ` ${f.value ?? '<value>'}`}`;
    const extras = [
      f.choices ? `one of ${f.choices.join('|')}` : '',
      f.default !== undefined ? `default ${f.default}` : '',
      f.env ? `env ${f.env}` : '',
      f.kind === 'list' ? 'repeatable' : '',
    ].filter(Boolean);
    lines.push(row(left, f.help + (extras.length ? ` (${extras.join('; ')})` : '')));
  }
  if (spec.examples?.length) {
    lines.push('', 'Examples:');
    for (const e of spec.examples) lines.push(`  ${e}`);
  }
  return lines.join('\n') + '\n';
}

function row(left: string, right: string): string {
  return left.length >= 30 ? `  ${left}\n  ${' '.repeat(30)}${right}` : `  ${left.padEnd(30)}${right}`;
}

// Shared shapes of the conformance runner: a target turns one suite folder into per-file results.

export interface CaseFailure {
  /** Case name inside the file (e.g. the YAML `name`, or a transformer folder). */
  readonly name: string;
  readonly message: string;
}

export interface FileResult {
  /** Path relative to the conformance root, e.g. `language/json-validation-cases.yaml`. */
  readonly file: string;
  readonly passed: number;
  readonly failed: number;
  readonly failures: readonly CaseFailure[];
}

export interface RunOptions {
  /** Only files whose relative path contains this substring. */
  readonly file?: string | undefined;
}

export interface Target {
  readonly name: string;
  /** `dir` is the conformance root (the folder holding `language/` and `openfga/`). */
  run(dir: string, options: RunOptions): Promise<FileResult[]>;
}

/** Accumulates pass/fail per case for one file. */
export class FileTally {
  private passed = 0;
  private readonly failures: CaseFailure[] = [];
  constructor(readonly file: string) {}

  /** Run one case: it passes when `fn` returns without throwing. */
  async check(name: string, fn: () => void | Promise<void>): Promise<void> {
    try {
      await fn();
      this.passed++;
    } catch (err) {
      this.failures.push({ name, message: err instanceof Error ? err.message : String(err) });
    }
  }

  result(): FileResult {
    return { file: this.file, passed: this.passed, failed: this.failures.length, failures: this.failures };
  }
}

// One writer for bench/results/latest.json, shared by every entry point (`npm run bench`, the
// stand-alone HTTP scenario). The file keeps the newest run of each registry scenario, so running
// one scenario never erases another's figures:
//   { "machine": {...}, "scenarios": { "<name>": { "at", "loadavg", "rows": [{scenario, metric, value, unit}] } } }

import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import type { Metric } from './scenario.js';

interface ScenarioRun {
  readonly at: string;
  /** 1, 5 and 15 minute load averages when the scenario finished: a loaded machine reads slower. */
  readonly loadavg: readonly number[];
  readonly rows: readonly Metric[];
}

interface ResultsFile {
  machine: { cpus: number; cpu: string; memoryGiB: number; node: string; platform: string };
  scenarios: Record<string, ScenarioRun>;
}

const FILE = new URL('./results/latest.json', import.meta.url);

function machine(): ResultsFile['machine'] {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    cpu: cpus[0]?.model ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
  };
}

async function load(): Promise<ResultsFile> {
  try {
    const parsed = JSON.parse(await readFile(FILE, 'utf8')) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed) && 'scenarios' in parsed) {
      return parsed as ResultsFile;
    }
  } catch {
    // No file yet, or an older layout: start afresh.
  }
  return { machine: machine(), scenarios: {} };
}

/** Replaces the stored run of scenario `name` with `rows`, keeping every other scenario's run. */
export async function recordRun(name: string, rows: readonly Metric[]): Promise<void> {
  const file = await load();
  file.machine = machine();
  file.scenarios[name] = {
    at: new Date().toISOString(),
    loadavg: os.loadavg().map((l) => Math.round(l * 100) / 100),
    rows,
  };
  await mkdir(new URL('./', FILE), { recursive: true });
  await writeFile(FILE, JSON.stringify(file, null, 2) + '\n');
}

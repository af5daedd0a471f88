// The registry of conformance targets. To add one: one import and one array entry.
import type { Target } from './types.js';
import { languageTarget } from './language.js';
import { engineTarget } from './engine.js';
import { httpTarget } from './http.js';

export const targets: readonly Target[] = [
  languageTarget,
  engineTarget(),
  httpTarget(),
];

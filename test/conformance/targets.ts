// The registry of conformance targets, each named for what it runs. To add one: one function
// and one array entry. `npm run conformance -- --target NAME` runs one.
import { dslToModel } from '../../src/model/dsl.js';
import type { Target } from './types.js';
import { languageTarget } from './language.js';
import { cachedModel, engineTarget } from './engine.js';
import { httpTarget } from './http.js';
import { createReferenceDriver } from './reference-driver.js';
import { createServiceDriver } from './service-driver.js';

/** One DSL conversion per model for both in-process targets (the conversion is tested by language.ts). */
const toModel = cachedModel(dslToModel);

/** The reference evaluator (src/engine/evaluation/semantics, test/oracle/reference.ts) called directly: the oracle the walker is held to. */
export const referenceTarget = () => engineTarget(createReferenceDriver(toModel), 'reference');
/** The in-process service (openLatch): the wasm walker for Check, the production list paths. */
export const walkerTarget = () => engineTarget(createServiceDriver(toModel), 'walker');

export const targets: readonly Target[] = [languageTarget, referenceTarget(), walkerTarget(), httpTarget()];

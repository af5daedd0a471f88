// Test helpers for src/model: run a thunk and capture the AppError it throws.
import { AppError } from '../../src/errors.js';

/** The AppError thrown by `fn`, or a failure when it returns or throws something else. */
export function appErrorOf(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw new Error(`expected an AppError, got ${String(err)}`);
  }
  throw new Error('expected an AppError, but the call succeeded');
}

/** `model\n  schema 1.1\n` + the given body lines (indentation kept as written). */
export function dsl(body: string): string {
  return `model\n  schema 1.1\n${body}`;
}

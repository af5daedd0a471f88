// Opaque pagination cursors: a scan tag plus the binary position of the last item returned.
// The API layer wraps them into signed continuation tokens; storage only needs them to resume
// exactly where a page ended and to reject anything it did not make.

import { AppError } from '../errors.js';

const CURSOR = /^([a-z])\.([A-Za-z0-9_-]*)$/;

function invalidCursor(): AppError {
  return new AppError('invalid_continuation_token', 'Invalid continuation token');
}

/** `tag.base64url(position)`; `position` is a binary string. */
export function encodeCursor(tag: string, position: string): string {
  return `${tag}.${Buffer.from(position, 'latin1').toString('base64url')}`;
}

/**
 * The position in `cursor`, undefined when no cursor was given. Throws invalid_continuation_token
 * unless the cursor has this tag, is canonical base64url and passes `valid`.
 */
export function decodeCursor(
  cursor: string | undefined,
  tag: string,
  valid: (position: string) => boolean,
): string | undefined {
  if (cursor === undefined) return undefined;
  const m = CURSOR.exec(cursor);
  if (!m || m[1] !== tag) throw invalidCursor();
  const bytes = Buffer.from(m[2] ?? '', 'base64url');
  if (bytes.toString('base64url') !== m[2]) throw invalidCursor();
  const position = bytes.toString('latin1');
  if (!valid(position)) throw invalidCursor();
  return position;
}

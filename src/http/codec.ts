// The msgpack codec of the HTTP bodies and the batch channel (msgpackr, imported only here and
// re-used by the channel client so both ends agree on one configuration).

import { Packr, Unpackr } from 'msgpackr';

// Plain maps ↔ objects, no record extension (every msgpack implementation can talk to latch),
// `undefined` encoded as nil; numbers stay numbers.
const packr = new Packr({ useRecords: false, mapsAsObjects: true, variableMapSize: true });
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true });

export function encodeMsgpack(value: unknown): Buffer {
  return packr.pack(value);
}

/** Decodes one msgpack value; throws on malformed input. */
export function decodeMsgpack(bytes: Uint8Array): unknown {
  return unpackr.unpack(bytes);
}

export const MSGPACK_TYPE = 'application/msgpack';

/** True for `application/msgpack` and the older `application/x-msgpack`. */
export function isMsgpackType(contentType: string): boolean {
  return contentType.includes('msgpack');
}

// The msgpack codec of the HTTP bodies and the batch channel (msgpackr, imported only here and
// re-used by the channel client so both ends agree on one configuration).

import { C1, Packr, Unpackr } from 'msgpackr';

// Plain maps ↔ objects, no record extension (every msgpack implementation can talk to latch),
// `undefined` encoded as nil; numbers stay numbers.
const packr = new Packr({ useRecords: false, mapsAsObjects: true, variableMapSize: true });
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true });

export function encodeMsgpack(value: unknown): Buffer {
  return packr.pack(value);
}

/** Decodes one msgpack value; throws on malformed input. */
export function decodeMsgpack(bytes: Uint8Array): unknown {
  const value: unknown = unpackr.unpack(bytes);
  // 0xC1 is "never used" in msgpack; msgpackr decodes it to a marker object instead of failing.
  if (value === C1) throw new Error('byte 0xc1 is not valid msgpack');
  return value;
}

export const MSGPACK_TYPE = 'application/msgpack';

/** True for `application/msgpack` and the older `application/x-msgpack`. */
export function isMsgpackType(contentType: string): boolean {
  return contentType.includes('msgpack');
}

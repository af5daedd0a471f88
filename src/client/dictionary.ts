// The client side of a channel connection's dictionary (docs/msgpack.md "Bulk checks"): strings
// get consecutive ids in the order they are first seen, and the ones not yet sent are handed out
// as define-strings bodies, which the client puts ahead of every request of a frame.

import {
  MAX_DEFINE,
  MAX_DICTIONARY_STRINGS,
  MAX_DICTIONARY_UNITS,
  MAX_STRING_BYTES,
} from '../domain/channel-limits.js';

export class ClientDictionary {
  readonly #ids = new Map<string, number>();
  #unsent: string[] = [];
  #sent = 0;
  #units = 0;

  /** The id of `s` (declared with the next frame if new), or -1 when `s` cannot be declared. */
  id(s: string): number {
    const known = this.#ids.get(s);
    if (known !== undefined) return known;
    if (
      this.#ids.size >= MAX_DICTIONARY_STRINGS ||
      this.#units + s.length > MAX_DICTIONARY_UNITS ||
      !this.#declarable(s)
    )
      return -1;
    this.#units += s.length;
    const id = this.#ids.size;
    this.#ids.set(s, id);
    this.#unsent.push(s);
    return id;
  }

  /** Whether the strings of a check can all have ids (so the check can go as ids). */
  fits(a: string, b: string, c: string): boolean {
    return (
      this.#ids.size + 3 <= MAX_DICTIONARY_STRINGS &&
      this.#units + a.length + b.length + c.length <= MAX_DICTIONARY_UNITS &&
      this.#declarable(a) &&
      this.#declarable(b) &&
      this.#declarable(c)
    );
  }

  #declarable(s: string): boolean {
    return s.length * 3 <= MAX_STRING_BYTES || this.#ids.has(s) || Buffer.byteLength(s, 'utf8') <= MAX_STRING_BYTES;
  }

  /** define-strings bodies for the strings not sent yet (in id order), and marks them sent. */
  takeUnsent(): { first: number; strings: string[] }[] {
    const out: { first: number; strings: string[] }[] = [];
    for (let at = 0; at < this.#unsent.length; at += MAX_DEFINE) {
      out.push({ first: this.#sent + at, strings: this.#unsent.slice(at, at + MAX_DEFINE) });
    }
    this.#sent += this.#unsent.length;
    this.#unsent = [];
    return out;
  }
}

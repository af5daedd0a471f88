// Limits of the msgpack channel's string dictionary (docs/msgpack.md "Bulk checks"), shared by the
// server (src/api/bulk.ts enforces them) and the typed client (src/client/dictionary.ts stays
// under them, sending a string as text past them).

/** Strings one connection may declare (memory bound: ~100 B each plus the engine's caches). */
export const MAX_DICTIONARY_STRINGS = 1_000_000;
/** UTF-16 code units one connection may declare in all (≈ 2 bytes each in memory): 32 Mi, 64 MiB. */
export const MAX_DICTIONARY_UNITS = 32 * 1024 * 1024;
/** Strings per define-strings request. */
export const MAX_DEFINE = 65_536;
/** Longest declarable string in UTF-8 bytes: the longest field a check names (user, 512). */
export const MAX_STRING_BYTES = 512;

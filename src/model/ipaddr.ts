// IP addresses and CIDR prefixes for the CEL `ipaddress` type (docs/reference/semantics.md §5.9.4/§5.9.5),
// following Go's net/netip rules: dotted-quad IPv4 without leading zeros, RFC 4291 IPv6 text
// (an embedded IPv4 tail allowed, zones rejected), IPv4-mapped IPv6 normalised to IPv4.

/** An IPv4 (4 bytes) or IPv6 (16 bytes) address. Immutable. */
export class IPAddress {
  constructor(readonly bytes: Uint8Array) {}

  get isV4(): boolean {
    return this.bytes.length === 4;
  }

  equals(other: IPAddress): boolean {
    return this.bytes.length === other.bytes.length && this.bytes.every((b, i) => b === other.bytes[i]);
  }

  /** True when the first `bits` bits equal those of `prefix` (same family only). */
  inPrefix(prefix: IPAddress, bits: number): boolean {
    if (prefix.bytes.length !== this.bytes.length) return false;
    for (let i = 0; i < bits; i++) {
      const byte = i >> 3;
      const mask = 0x80 >> (i & 7);
      if (((this.bytes[byte] ?? 0) & mask) !== ((prefix.bytes[byte] ?? 0) & mask)) return false;
    }
    return true;
  }

  toString(): string {
    if (this.isV4) return Array.from(this.bytes).join('.');
    const groups: string[] = [];
    for (let i = 0; i < 16; i += 2) groups.push((((this.bytes[i] ?? 0) << 8) | (this.bytes[i + 1] ?? 0)).toString(16));
    return groups.join(':').replace(/(^|:)0(:0)+(:|$)/, '::');
  }
}

const V4_FIELD = /^(0|[1-9]\d{0,2})$/;

function parseV4(s: string): Uint8Array | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i] ?? '';
    if (!V4_FIELD.test(p) || Number(p) > 255) return undefined;
    out[i] = Number(p);
  }
  return out;
}

/** Parse the hex groups of one side of `::`; an IPv4 tail counts as two groups. */
function parseGroups(s: string, allowV4Tail: boolean): number[] | undefined {
  if (s === '') return [];
  const parts = s.split(':');
  const groups: number[] = [];
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i] ?? '';
    if (allowV4Tail && i === parts.length - 1 && p.includes('.')) {
      const v4 = parseV4(p);
      if (!v4) return undefined;
      groups.push(((v4[0] ?? 0) << 8) | (v4[1] ?? 0), ((v4[2] ?? 0) << 8) | (v4[3] ?? 0));
    } else {
      if (!/^[0-9a-fA-F]{1,4}$/.test(p)) return undefined;
      groups.push(parseInt(p, 16));
    }
  }
  return groups;
}

function parseV6(s: string): Uint8Array | undefined {
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const head = parseGroups(halves[0] ?? '', halves.length === 1);
  const tail = halves.length === 2 ? parseGroups(halves[1] ?? '', true) : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...new Array<number>(halves.length === 2 ? missing : 0).fill(0), ...tail];
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    out[2 * i] = g >> 8;
    out[2 * i + 1] = g & 0xff;
  });
  return out;
}

function unmap(bytes: Uint8Array): Uint8Array {
  const mapped =
    bytes.length === 16 && bytes.subarray(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  return mapped ? bytes.slice(12) : bytes;
}

/** `10.0.0.1`, `::1`, `::ffff:10.0.0.1` (→ `10.0.0.1`); undefined when malformed. */
export function parseIPAddress(s: string): IPAddress | undefined {
  const bytes = s.includes(':') ? parseV6(s) : parseV4(s);
  return bytes ? new IPAddress(unmap(bytes)) : undefined;
}

/** `10.0.0.0/8`, `2001:db8::/32`; IPv4-mapped prefixes are normalised (bits − 96). */
export function parsePrefix(s: string): { readonly addr: IPAddress; readonly bits: number } | undefined {
  const slash = s.indexOf('/');
  if (slash === -1) return undefined;
  const raw = s.includes(':') ? parseV6(s.slice(0, slash)) : parseV4(s.slice(0, slash));
  const bitsText = s.slice(slash + 1);
  if (!raw || !/^(0|[1-9]\d*)$/.test(bitsText)) return undefined;
  let bits = Number(bitsText);
  if (bits > raw.length * 8) return undefined;
  const addr = unmap(raw);
  if (addr.length === 4 && raw.length === 16) {
    if (bits < 96) return undefined;
    bits -= 96;
  }
  return { addr: new IPAddress(addr), bits };
}

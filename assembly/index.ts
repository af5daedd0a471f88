// The graph walker (replaced by the engine work): exports take and return numbers only.
export function abiVersion(): u32 {
  return 1;
}

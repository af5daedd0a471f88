// Browser stand-ins for the two Node imports of src/cli/tuple-file.ts, whose pure parsers the
// playground shares with `latch tuple write`: the playground never reads a file by path.

export function readFile(): never {
  throw new Error('reading files by path is not available in the browser');
}

export function extname(path: string): string {
  const slash = path.lastIndexOf('/');
  const dot = path.lastIndexOf('.');
  return dot > slash + 1 ? path.slice(dot) : '';
}

// Whether a file's bytes are text the file tools show, or a binary file they refuse or skip.

/** How much of a file's start is looked at. */
const SNIFF_BYTES = 8192;

/** True when the first 8 KB hold a NUL byte: the usual heuristic for a binary file. */
export function isBinary(bytes: Buffer): boolean {
  return bytes.subarray(0, SNIFF_BYTES).includes(0);
}

export { xxh3, xxh3Reset, xxh3Update, xxh3Update64, xxh3Digest } from "./xxh3";
export function heapBase(): usize { return (__heap_base + 63) & ~63; }

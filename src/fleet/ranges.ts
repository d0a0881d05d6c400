/**
 * Inclusive offset ranges (`[from, to]`, u64 as bigint) and the set algebra
 * the cluster view needs. A normalized list is sorted, and its ranges neither
 * overlap nor touch.
 */

export interface Range {
  from: bigint;
  to: bigint;
}

/** Offsets in a range. */
export const rangeSize = (range: Range): bigint => range.to - range.from + 1n;

/** Offsets in a normalized list. */
export function totalSize(ranges: readonly Range[]): bigint {
  let total = 0n;
  for (const range of ranges) total += rangeSize(range);
  return total;
}

/** Sorted, merged (overlapping and adjacent ranges joined); empty ranges (to < from) dropped. */
export function normalize(ranges: Iterable<Range>): Range[] {
  const sorted = [...ranges].filter((r) => r.to >= r.from).sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : 0));
  const out: Range[] = [];
  for (const range of sorted) {
    const last = out.at(-1);
    if (last !== undefined && range.from <= last.to + 1n) {
      if (range.to > last.to) last.to = range.to;
    } else {
      out.push({ from: range.from, to: range.to });
    }
  }
  return out;
}

export function union(...lists: readonly (readonly Range[])[]): Range[] {
  return normalize(lists.flat());
}

/** `a` without `b` (both normalized). */
export function subtract(a: readonly Range[], b: readonly Range[]): Range[] {
  const out: Range[] = [];
  let j = 0;
  for (const range of a) {
    let from = range.from;
    while (j < b.length && b[j]!.to < from) j++;
    let k = j;
    while (k < b.length && b[k]!.from <= range.to) {
      const cut = b[k]!;
      if (cut.from > from) out.push({ from, to: cut.from - 1n });
      if (cut.to + 1n > from) from = cut.to + 1n;
      k++;
    }
    if (from <= range.to) out.push({ from, to: range.to });
  }
  return out;
}

/** Math.max and Math.min take no bigint. */
function later(x: bigint, y: bigint): bigint {
  if (x > y) return x;
  return y;
}

function earlier(x: bigint, y: bigint): bigint {
  if (x < y) return x;
  return y;
}

/** Offsets in both (both normalized). */
export function intersect(a: readonly Range[], b: readonly Range[]): Range[] {
  const out: Range[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const from = later(a[i]!.from, b[j]!.from);
    const to = earlier(a[i]!.to, b[j]!.to);
    if (from <= to) out.push({ from, to });
    if (a[i]!.to < b[j]!.to) i++;
    else j++;
  }
  return out;
}

export function overlaps(a: readonly Range[], b: readonly Range[]): boolean {
  return intersect(a, b).length > 0;
}

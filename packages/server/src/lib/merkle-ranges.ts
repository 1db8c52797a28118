/**
 * The RFC 9162 §2.1 recursions as leaf ranges, for trees stored as their complete subtrees: the
 * subtrees of an audit path (§2.1.3.1) and of a consistency proof (§2.1.4.1), and the complete
 * subtrees that tile any range. Pure arithmetic on safe integers; the audit log's tree
 * (modules/audit/tree.ts) and the key directory's log (modules/key-directory/log-tree.ts) hash
 * what these name.
 */

/** Leaves [start, end). */
export interface LeafRange {
  start: number;
  end: number;
}

/** A complete subtree: leaves [index * 2^level, (index + 1) * 2^level). */
export interface NodeId {
  level: number;
  index: number;
}

/** The largest power of two below `n` (n > 1): the RFC's split point `k`. */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/**
 * The subtrees of the audit path of leaf `m` in the tree of `size` leaves (RFC 9162 §2.1.3.1
 * PATH(m, D[size])), deepest first, as leaf ranges. 0 <= m < size.
 */
export function inclusionRanges(m: number, size: number): LeafRange[] {
  const out: LeafRange[] = [];
  const path = (m: number, start: number, end: number): void => {
    const n = end - start;
    if (n <= 1) return;
    const k = splitPoint(n);
    if (m < k) {
      path(m, start, start + k);
      out.push({ start: start + k, end });
    } else {
      path(m - k, start + k, end);
      out.push({ start, end: start + k });
    }
  };
  path(m, 0, size);
  return out;
}

/**
 * The subtrees of the consistency proof from size `first` to size `second` (RFC 9162 §2.1.4.1
 * PROOF(first, D[second]) = SUBPROOF(first, D[second], true)), as leaf ranges. 0 < first < second.
 */
export function consistencyRanges(first: number, second: number): LeafRange[] {
  const out: LeafRange[] = [];
  const subproof = (m: number, start: number, end: number, whole: boolean): void => {
    const n = end - start;
    if (m === n) {
      if (!whole) out.push({ start, end });
      return;
    }
    const k = splitPoint(n);
    if (m <= k) {
      subproof(m, start, start + k, whole);
      out.push({ start: start + k, end });
    } else {
      subproof(m - k, start + k, end, false);
      out.push({ start, end: start + k });
    }
  };
  subproof(first, 0, second, true);
  return out;
}

/**
 * The complete subtrees that tile a range of the RFC's recursions, left to right (largest first):
 * from `start`, each time the largest power-of-two block aligned at the current leaf that fits.
 */
export function rangeNodes({ start, end }: LeafRange): NodeId[] {
  const out: NodeId[] = [];
  let s = start;
  while (s < end) {
    let width = 1;
    let level = 0;
    while (s % (width * 2) === 0 && s + width * 2 <= end) {
      width *= 2;
      level++;
    }
    out.push({ level, index: s / width });
    s += width;
  }
  return out;
}

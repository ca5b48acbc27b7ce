/**
 * Bounded label values for the router's Prometheus metrics: closed sets (outcomes, reasons, events) keep what they
 * know and fold anything else into `other`; open sets (node and model names, lanes) keep the first `cap` distinct
 * values seen and fold later ones into `other`. A missing value is `none`. Pure; no allocation once a value is known.
 */

export const OTHER = 'other';
export const NONE = 'none';

/** Longest label value kept; a longer name is folded into `other`. */
export const MAX_LABEL_LENGTH = 128;

/** A label whose values come from a closed list. */
export class ClosedLabel {
  private readonly known: ReadonlySet<string>;

  constructor(readonly values: readonly string[]) {
    this.known = new Set(values);
  }

  fold(v: string | null | undefined): string {
    if (v === null || v === undefined || v === '') return NONE;
    return this.known.has(v) ? v : OTHER;
  }
}

/** A label whose values are configured names (nodes, models, lanes): at most `cap` distinct ones, then `other`. */
export class OpenLabel {
  private readonly seen = new Set<string>();

  constructor(readonly cap: number) {}

  fold(v: string | null | undefined): string {
    if (v === null || v === undefined || v === '') return NONE;
    if (this.seen.has(v)) return v;
    if (this.seen.size >= this.cap || v.length > MAX_LABEL_LENGTH || v === OTHER || v === NONE) return OTHER;
    this.seen.add(v);
    return v;
  }

  get size(): number {
    return this.seen.size;
  }
}

/**
 * Children of a labelled metric found by their label values through nested maps (no key string built per call), at
 * most `maxChildren` of them: past that, every new label set shares one child whose labels are all `other`.
 */
export class ChildTree<T> {
  private readonly root = new Map<string, unknown>();
  private count = 0;
  private overflow?: T;

  constructor(
    readonly labelNames: readonly string[],
    private readonly fresh: (labels: Record<string, string>) => T,
    readonly maxChildren = 5_000,
  ) {
    if (labelNames.length < 1 || labelNames.length > 6) throw new Error('a child tree has 1 to 6 labels');
  }

  /** The child of these label values, in `labelNames` order. */
  get(a: string, b = '', c = '', d = '', e = '', f = ''): T {
    const depth = this.labelNames.length;
    let node = this.root;
    for (let i = 0; i < depth - 1; i++) {
      const k = i === 0 ? a : i === 1 ? b : i === 2 ? c : i === 3 ? d : e;
      let next = node.get(k) as Map<string, unknown> | undefined;
      if (!next) {
        if (this.count >= this.maxChildren) return this.overflowChild();
        node.set(k, (next = new Map()));
      }
      node = next;
    }
    const last = depth === 1 ? a : depth === 2 ? b : depth === 3 ? c : depth === 4 ? d : depth === 5 ? e : f;
    let leaf = node.get(last) as T | undefined;
    if (leaf === undefined) {
      if (this.count >= this.maxChildren) return this.overflowChild();
      const values = [a, b, c, d, e, f];
      leaf = this.fresh(Object.fromEntries(this.labelNames.map((n, i) => [n, values[i]])));
      node.set(last, leaf);
      this.count++;
    }
    return leaf;
  }

  get size(): number {
    return this.count;
  }

  private overflowChild(): T {
    this.overflow ??= this.fresh(Object.fromEntries(this.labelNames.map((n) => [n, OTHER])));
    return this.overflow;
  }
}

/**
 * A small seeded generator (mulberry32) with the draws the environments and policies need. Every seeded thing in
 * the lab draws from one of these, so the same seed gives the same run everywhere (Node, Worker, page).
 */

export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = (Math.trunc(seed) ^ 0x9e3779b9) >>> 0;
  }

  /** Derives an independent generator from this seed and some labels (e.g. sample id and turn). */
  static derive(seed: number, ...labels: (number | string)[]): Rng {
    let h = (Math.trunc(seed) ^ 0x811c9dc5) >>> 0;
    for (const label of labels) {
      for (const ch of String(label) + "\u0000") {
        h ^= ch.codePointAt(0)!;
        h = Math.imul(h, 0x01000193) >>> 0;
      }
    }
    return new Rng(h);
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [lo, hi], both included (Python's randint). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  choice<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error("choice from an empty list");
    return items[Math.floor(this.next() * items.length)]!;
  }
}

/**
 * Search for the sliding puzzle oracle. A board is a flat array of n·n tiles in reading order, 0 the blank; the
 * goal has tile v at index v−1 and the blank last. A path is the list of indices the blank moves to (the tile
 * there slides into the blank).
 *
 * IDA* with Manhattan distance plus linear conflicts (admissible, so its paths are shortest) runs first, under a
 * node budget; past it, a weighted A* under its own budget finds a path that may be longer, or failing that the
 * path to the board closest to the goal it reached, so the oracle always answers quickly and still makes progress.
 */

export interface SearchResult {
  path: number[];
  /** The path reaches the goal (false: it only gets closer). */
  complete: boolean;
  /** The path is a shortest one. */
  optimal: boolean;
}

export interface SearchBudget {
  idaNodes: number;
  astarExpansions: number;
}

export const DEFAULT_BUDGET: SearchBudget = { idaNodes: 200_000, astarExpansions: 60_000 };

export function isSolved(tiles: readonly number[]): boolean {
  return tiles.every((v, i) => (i === tiles.length - 1 ? v === 0 : v === i + 1));
}

/** Neighbours of the blank, in a fixed order (above, below, left, right) so the search is deterministic. */
export function blankNeighbours(blank: number, n: number): number[] {
  const [r, c] = [Math.floor(blank / n), blank % n];
  const out: number[] = [];
  if (r > 0) out.push(blank - n);
  if (r < n - 1) out.push(blank + n);
  if (c > 0) out.push(blank - 1);
  if (c < n - 1) out.push(blank + 1);
  return out;
}

/** Tiles that must leave a line so the others are in goal order: length minus the longest increasing subsequence. */
function removals(goals: number[]): number {
  if (goals.length < 2) return 0;
  const best = goals.map(() => 1);
  let longest = 1;
  for (let i = 1; i < goals.length; i++) {
    for (let j = 0; j < i; j++) if (goals[j]! < goals[i]! && best[j]! + 1 > best[i]!) best[i] = best[j]! + 1;
    longest = Math.max(longest, best[i]!);
  }
  return goals.length - longest;
}

/** Two moves per tile that must step out of line `k` (a row, or a column) to let the others pass. */
function lineConflict(tiles: readonly number[], n: number, k: number, row: boolean): number {
  const goals: number[] = [];
  for (let j = 0; j < n; j++) {
    const v = tiles[row ? k * n + j : j * n + k]!;
    if (v === 0) continue;
    if (row ? Math.floor((v - 1) / n) === k : (v - 1) % n === k) goals.push(row ? (v - 1) % n : Math.floor((v - 1) / n));
  }
  return 2 * removals(goals);
}

const distance = (a: number, b: number, n: number) =>
  Math.abs(Math.floor(a / n) - Math.floor(b / n)) + Math.abs((a % n) - (b % n));

/** Manhattan distance plus linear conflicts in every row and column. */
export function heuristic(tiles: readonly number[], n: number): number {
  let h = 0;
  for (let i = 0; i < tiles.length; i++) if (tiles[i] !== 0) h += distance(i, tiles[i]! - 1, n);
  for (let k = 0; k < n; k++) h += lineConflict(tiles, n, k, true) + lineConflict(tiles, n, k, false);
  return h;
}

/**
 * Slides the tile at `target` into the blank (in place) and returns the heuristic's change. Only the moved tile's
 * distance and the two lines it leaves and enters change: a vertical move changes two rows, a horizontal one two
 * columns (within its own line the tiles keep their order).
 */
export function slide(tiles: number[], n: number, blank: number, target: number): number {
  const tile = tiles[target]!;
  const row = Math.abs(target - blank) === n;
  const [a, b] = row ? [Math.floor(blank / n), Math.floor(target / n)] : [blank % n, target % n];
  const before = lineConflict(tiles, n, a, row) + lineConflict(tiles, n, b, row);
  tiles[blank] = tile;
  tiles[target] = 0;
  const after = lineConflict(tiles, n, a, row) + lineConflict(tiles, n, b, row);
  return distance(blank, tile - 1, n) - distance(target, tile - 1, n) + after - before;
}

function idaStar(start: readonly number[], n: number, budget: number): number[] | null {
  const tiles = [...start];
  let blank = tiles.indexOf(0);
  const path: number[] = [];
  let nodes = 0;
  let bound = heuristic(tiles, n);
  const FOUND = -1;

  const search = (g: number, h: number, previous: number): number => {
    if (++nodes > budget) return Infinity;
    if (g + h > bound) return g + h;
    if (h === 0) return FOUND;
    let next = Infinity;
    for (const target of blankNeighbours(blank, n)) {
      if (target === previous) continue;
      const from = blank;
      const delta = slide(tiles, n, from, target);
      blank = target;
      path.push(target);
      const t = search(g + 1, h + delta, from);
      if (t === FOUND) return FOUND;
      path.pop();
      tiles[target] = tiles[from]!;
      tiles[from] = 0;
      blank = from;
      next = Math.min(next, t);
      if (nodes > budget) return Infinity;
    }
    return next;
  };

  const h0 = bound;
  for (;;) {
    const t = search(0, h0, -1);
    if (t === FOUND) return path;
    if (t === Infinity) return null;
    bound = t;
  }
}

interface Node {
  tiles: number[];
  blank: number;
  g: number;
  h: number;
  parent: Node | null;
  move: number;
}

/** A binary min-heap on (f, then insertion order), so ties break the same way every run. */
class Heap {
  private items: { f: number; seq: number; node: Node }[] = [];
  private seq = 0;
  get size() {
    return this.items.length;
  }
  push(f: number, node: Node) {
    const items = this.items;
    items.push({ f, seq: this.seq++, node });
    let i = items.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(i, p)) break;
      [items[i], items[p]] = [items[p]!, items[i]!];
      i = p;
    }
  }
  pop(): Node {
    const items = this.items;
    const top = items[0]!;
    const last = items.pop()!;
    if (items.length > 0) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const [l, r] = [2 * i + 1, 2 * i + 2];
        let m = i;
        if (l < items.length && this.less(l, m)) m = l;
        if (r < items.length && this.less(r, m)) m = r;
        if (m === i) break;
        [items[i], items[m]] = [items[m]!, items[i]!];
        i = m;
      }
    }
    return top.node;
  }
  private less(a: number, b: number) {
    const [x, y] = [this.items[a]!, this.items[b]!];
    return x.f < y.f || (x.f === y.f && x.seq < y.seq);
  }
}

const pathTo = (node: Node): number[] => {
  const path: number[] = [];
  for (let at: Node | null = node; at && at.parent; at = at.parent) path.push(at.move);
  return path.reverse();
};

/** Weighted A* (f = g + 4h): fast, not shortest. Returns the goal path, or the path to the closest board seen. */
function weightedAStar(start: readonly number[], n: number, budget: number): { path: number[]; complete: boolean } {
  const root: Node = { tiles: [...start], blank: start.indexOf(0), g: 0, h: heuristic(start, n), parent: null, move: -1 };
  const open = new Heap();
  const seen = new Map<string, number>([[String.fromCharCode(...root.tiles), 0]]);
  open.push(4 * root.h, root);
  let closest = root;
  for (let expanded = 0; open.size > 0 && expanded < budget; expanded++) {
    const node = open.pop();
    if (node.h === 0) return { path: pathTo(node), complete: true };
    if (node.h < closest.h || (node.h === closest.h && node.g < closest.g)) closest = node;
    for (const target of blankNeighbours(node.blank, n)) {
      const tiles = [...node.tiles];
      const h = node.h + slide(tiles, n, node.blank, target);
      const key = String.fromCharCode(...tiles);
      const g = node.g + 1;
      if ((seen.get(key) ?? Infinity) <= g) continue;
      seen.set(key, g);
      const child: Node = { tiles, blank: target, g, h, parent: node, move: target };
      open.push(g + 4 * child.h, child);
    }
  }
  return { path: pathTo(closest), complete: false };
}

export function solvePuzzle(tiles: readonly number[], n: number, budget: SearchBudget = DEFAULT_BUDGET): SearchResult {
  if (isSolved(tiles)) return { path: [], complete: true, optimal: true };
  const shortest = idaStar(tiles, n, budget.idaNodes);
  if (shortest) return { path: shortest, complete: true, optimal: true };
  const found = weightedAStar(tiles, n, budget.astarExpansions);
  // Nothing closer within the budget: any legal move still changes the board the next search starts from.
  if (found.path.length === 0) found.path = [blankNeighbours(tiles.indexOf(0), n)[0]!];
  return { ...found, optimal: false };
}

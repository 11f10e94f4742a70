/**
 * The bound every parser of the lab's inputs puts on a JSON value before anything else reads it: scenario and suite
 * files (and the share link's scenario, which goes through the scenario parser), JSONL imports, saved runs and replay
 * files, a remote environment's answers, the datasets and metadata environments return.
 *
 * - **Depth.** At most `MAX_JSON_DEPTH` (100) levels of objects and arrays inside one another, counted from the top
 *   of the file, the line or the answer (`{}` is one level, `{"a": []}` two). `JSON.parse` itself reads any depth,
 *   but much of what follows does not: V8's `JSON.stringify` overflows the stack near 5,000 levels (so a run with such
 *   a value could never be exported), and so do recursive copies and checks. No real scenario comes near 100: an
 *   environment's state sits 4 levels deep in a scenario, a result or an export line (`samples[0].extra_env_info`,
 *   `lab/turns[0].metadata`), which leaves it 97 (`MAX_METADATA_DEPTH`).
 * - **`__proto__` keys.** `JSON.parse` keeps a key named `__proto__` as data, but assigning it to an object (as
 *   zod, copies and look-ups do) sets the object's prototype instead and the key is gone without a word; so such a
 *   key is an error wherever it is.
 *
 * The walk is iterative (an explicit stack, no recursion), so the check itself cannot overflow whatever the depth,
 * and it stops at the first problem, naming its path: `samples[0].extra_env_info.a.a.a…: nested deeper than 100
 * levels`.
 */

/** The most levels of objects and arrays inside one another that any JSON input of the lab may have. */
export const MAX_JSON_DEPTH = 100;

/**
 * The most levels an environment's metadata (`extra_env_info`) may have of its own: a scenario, a result and an
 * export line put it 3 levels deep (`samples` → `[i]` → `extra_env_info`), so it fits everywhere it goes.
 */
export const MAX_METADATA_DEPTH = MAX_JSON_DEPTH - 3;

/** A field path: keys and array indices from the top. */
export type JsonPath = readonly (string | number)[];

export interface JsonValueProblem {
  /** Where: the container that is one level too deep, or the `__proto__` key. */
  path: JsonPath;
  message: string;
}

export interface JsonValueCheckOptions {
  /** Default `MAX_JSON_DEPTH`. */
  maxDepth?: number;
  /** The level the value itself is at, when it stands inside a larger input (default 1: it is the top). */
  rootDepth?: number;
  /**
   * The value may share objects or refer to itself (an environment's return, not parsed JSON): an object reached
   * again is walked again only when reached deeper than before, so the walk stays within (objects × depth).
   */
  shared?: boolean;
}

interface Frame {
  value: object;
  depth: number;
  parent: Frame | null;
  key: string | number;
  /** A `__proto__` key of `parent`, reported when the walk gets to it (in document order). */
  proto?: true;
}

function pathOf(frame: Frame): (string | number)[] {
  const out: (string | number)[] = [];
  for (let f: Frame | null = frame; f && f.parent !== null; f = f.parent) out.push(f.key);
  return out.reverse();
}

const deeper = (maxDepth: number) => `nested deeper than ${maxDepth} levels`;
export const PROTO_KEY_MESSAGE = 'a key named "__proto__" is not allowed (a JavaScript object cannot keep it as data)';

/**
 * The first problem of `value` as a JSON input (too deep, a `__proto__` key), in document order, or null.
 * Primitives and the members of lists of primitives (token ids, log-probabilities) cost one type check each.
 */
export function findJsonValueProblem(value: unknown, options: JsonValueCheckOptions = {}): JsonValueProblem | null {
  if (value === null || typeof value !== "object") return null;
  if (!options.shared) return walk(value, options, null, Infinity) as JsonValueProblem | null; // no budget: never over it
  // A value that may share objects is walked without bookkeeping first (an environment's small state, every step);
  // one that takes more than a few thousand objects' walking (big, or blown up by sharing) again with it.
  const quick = walk(value, options, null, QUICK_WALK_OBJECTS);
  return quick !== OVER_BUDGET ? quick : (walk(value, options, new Map(), Infinity) as JsonValueProblem | null);
}

const QUICK_WALK_OBJECTS = 4096;
const OVER_BUDGET: unique symbol = Symbol("over budget");

function walk(
  value: object,
  options: JsonValueCheckOptions,
  seen: Map<object, number> | null,
  budget: number,
): JsonValueProblem | null | typeof OVER_BUDGET {
  const maxDepth = options.maxDepth ?? MAX_JSON_DEPTH;
  const stack: Frame[] = [{ value, depth: options.rootDepth ?? 1, parent: null, key: "" }];
  let walked = 0;
  while (stack.length > 0) {
    if (++walked > budget) return OVER_BUDGET;
    const frame = stack.pop()!;
    if (frame.proto) return { path: pathOf(frame), message: PROTO_KEY_MESSAGE };
    if (frame.depth > maxDepth) return { path: pathOf(frame), message: deeper(maxDepth) };
    if (seen) {
      // Reached before at this depth or deeper: nothing below it can be deeper now.
      const before = seen.get(frame.value);
      if (before !== undefined && before >= frame.depth) continue;
      seen.set(frame.value, frame.depth);
    }
    const depth = frame.depth + 1;
    // Children are pushed last to first, so they are walked in document order.
    if (Array.isArray(frame.value)) {
      const list = frame.value as unknown[];
      for (let i = list.length - 1; i >= 0; i--) {
        const item = list[i];
        if (item !== null && typeof item === "object") stack.push({ value: item, depth, parent: frame, key: i });
      }
      continue;
    }
    if (ArrayBuffer.isView(frame.value)) continue; // numbers only (a typed array in a JS environment's metadata)
    const record = frame.value as Record<string, unknown>;
    const keys = Object.keys(record);
    for (let k = keys.length - 1; k >= 0; k--) {
      const key = keys[k]!;
      if (key === "__proto__") {
        stack.push({ value: record, depth, parent: frame, key, proto: true });
        continue;
      }
      const item = record[key];
      if (item !== null && typeof item === "object") stack.push({ value: item, depth, parent: frame, key });
    }
  }
  return null;
}

/** How many path parts a message shows before `…` (a path 100 levels long says little more than its start). */
const SHOWN_PARTS = 10;

/** `samples[0].extra_env_info.a`; `root` for the empty path; a long path is cut after its first parts with `…`. */
export function formatJsonPath(path: JsonPath, root = "(top)"): string {
  let out = "";
  const shown = path.length > SHOWN_PARTS + 2 ? SHOWN_PARTS : path.length;
  for (let i = 0; i < shown; i++) {
    const part = path[i]!;
    out += typeof part === "number" ? `[${part}]` : `${out ? "." : ""}${part}`;
  }
  if (shown < path.length) out += "…";
  return out || root;
}

/** `path: message` of a problem, its path after `prefix` (`samples[0]`, a source name) when given. */
export function describeJsonValueProblem(problem: JsonValueProblem, prefix: JsonPath = [], root?: string): string {
  return `${formatJsonPath([...prefix, ...problem.path], root)}: ${problem.message}`;
}

/** What a value is, in words for an error: `an array`, `an object`, `a string`, `null`, `undefined`. */
export function describeType(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "undefined";
  if (Array.isArray(value)) return "an array";
  const type = typeof value;
  return type === "object" ? "an object" : `a ${type}`;
}

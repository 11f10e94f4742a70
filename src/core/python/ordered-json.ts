/**
 * JSON objects with their keys in source order, as Python's dicts keep them. A JavaScript object lists integer-like
 * keys first (`{"path": 1, "10": 2, "2": 3}` iterates "2", "10", "path"), so the order a model wrote a tool call's
 * arguments in is lost by `JSON.parse`; the reference re-serialises them in that order (`arguments_json`) and quotes
 * them in it (`repr`). `parseJsonKeepingOrder` remembers each object's source order beside it; `pyEntries` reads it.
 */

const keyOrder = new WeakMap<object, readonly string[]>();

/** An object's entries in the order its JSON source gave them (Python's dict order); else JavaScript's. */
export function pyEntries(value: object): [string, unknown][] {
  const order = keyOrder.get(value);
  const record = value as Record<string, unknown>;
  return order ? order.map((k) => [k, record[k]]) : Object.entries(record);
}

/**
 * `JSON.parse(text)`, each object's key order remembered (`pyEntries`). Throws what `JSON.parse` throws for text that
 * is not JSON (the parse is checked by it first); a nesting too deep for this stack throws a `RangeError`.
 */
export function parseJsonKeepingOrder(text: string): unknown {
  const value: unknown = JSON.parse(text);
  if (value === null || typeof value !== "object") return value;
  const reader = new OrderReader(text);
  reader.visit(value);
  return value;
}

/**
 * Walks valid JSON text alongside its parsed value, recording each object's keys as they first appear (Python's
 * order for a duplicate key: its first place, its last value). Each value's text is walked with the parsed value at
 * its place; an earlier duplicate's walk may record an order on the final value, which the last one's walk, coming
 * after it, replaces.
 */
class OrderReader {
  private at = 0;
  constructor(private readonly text: string) {}

  visit(value: unknown): void {
    this.skipSpace();
    const ch = this.text[this.at];
    if (ch === "{") this.object(value);
    else if (ch === "[") this.array(value);
    else if (ch === '"') this.string();
    else this.scalar();
  }

  private object(value: unknown): void {
    const target = value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
    this.at++; // {
    const keys: string[] = [];
    const seen = new Set<string>();
    this.skipSpace();
    if (this.text[this.at] === "}") this.at++;
    else {
      for (;;) {
        this.skipSpace();
        const start = this.at;
        const key = JSON.parse(this.text.slice(start, this.string())) as string;
        this.skipSpace();
        this.at++; // :
        this.visit(target && Object.hasOwn(target, key) ? target[key] : undefined);
        if (!seen.has(key)) {
          seen.add(key);
          keys.push(key);
        }
        this.skipSpace();
        if (this.text[this.at++] === "}") break; // else ","
      }
    }
    if (target) keyOrder.set(target, keys);
  }

  private array(value: unknown): void {
    const items = Array.isArray(value) ? value : null;
    this.at++; // [
    this.skipSpace();
    if (this.text[this.at] === "]") {
      this.at++;
      return;
    }
    for (let i = 0; ; i++) {
      this.visit(items?.[i]);
      this.skipSpace();
      if (this.text[this.at++] === "]") return; // else ","
    }
  }

  /** Skips a string literal; returns where it ends. */
  private string(): number {
    this.at++; // opening quote
    while (this.text[this.at] !== '"') this.at += this.text[this.at] === "\\" ? 2 : 1;
    return ++this.at;
  }

  private scalar(): void {
    while (this.at < this.text.length && !",]} \t\n\r".includes(this.text[this.at]!)) this.at++;
  }

  private skipSpace(): void {
    while (this.at < this.text.length && " \t\n\r".includes(this.text[this.at]!)) this.at++;
  }
}

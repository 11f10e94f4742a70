/** What the importers' tests share: a fixture's text, a dump read as the page reads it, a sample's kept fields. */

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { JsonlAccumulator, type SampleLine } from "../jsonl-reader.js";

export const FIXTURES = join(import.meta.dirname, "fixtures");

export const fixture = (name: string) => readFileSync(join(FIXTURES, name), "utf8");

/** A dump's text read with the lab's line reader (the format found from the first record, unless named). */
export function read(text: string, options: { format?: string; fileName?: string } = {}) {
  const acc = new JsonlAccumulator(options);
  acc.push(text);
  return acc.end();
}

export const imported = (s: SampleLine) => (s as unknown as { imported: { format: string; fields: Record<string, unknown> } }).imported;

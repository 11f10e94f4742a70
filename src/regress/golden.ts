/**
 * Reads a scenario's golden folder (`samples.jsonl`, `metrics.json`). An absent file is `null` (the scenario is
 * reported as missing its golden); a damaged one (not a file, not JSON, a line that is not a sample object,
 * `NaN` where JSON has none, nested deeper than the inputs' limit) is a GoldenError naming the file and the line, which the runner reports as that
 * scenario's bad input while the others still run.
 */

import { LabError } from "../core/index.js";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describeJsonValueProblem, findJsonValueProblem } from "../core/index.js";
import { describeJsonError } from "../scenario/json-text.js";
import { jsonlLines } from "../scenario/jsonl-lines.js";
import { decodeUtf8 } from "../scenario/utf8.js";

export class GoldenError extends LabError {
  override name = "GoldenError";
  override readonly code = "invalid_golden";
}

export interface Golden {
  samplesJsonl: string | null;
  metrics: Record<string, unknown> | null;
}

async function readIfThere(path: string): Promise<string | null> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return null;
    if (code === "EISDIR") throw new GoldenError(`damaged golden ${path}: a folder, expected a file`);
    throw new GoldenError(`damaged golden ${path}: cannot be read: ${(e as Error).message}`);
  }
  try {
    return decodeUtf8(bytes);
  } catch (e) {
    throw new GoldenError(`damaged golden ${path}: ${(e as Error).message}`);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Checks the golden transcript line by line; throws naming the first bad line. */
export function checkGoldenSamples(text: string, path: string): void {
  jsonlLines(text).forEach((line, i) => {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (e) {
      throw new GoldenError(`damaged golden ${path}: line ${i + 1}: ${describeJsonError(line, e)}`);
    }
    if (!isObject(value)) throw new GoldenError(`damaged golden ${path}: line ${i + 1}: expected a sample object`);
    const problem = findJsonValueProblem(value);
    if (problem) throw new GoldenError(`damaged golden ${path}: line ${i + 1}: ${describeJsonValueProblem(problem)}`);
  });
}

export async function readGolden(dir: string): Promise<Golden> {
  const samplesPath = join(dir, "samples.jsonl");
  const metricsPath = join(dir, "metrics.json");
  const samplesJsonl = await readIfThere(samplesPath);
  const metricsText = await readIfThere(metricsPath);
  if (samplesJsonl !== null) checkGoldenSamples(samplesJsonl, samplesPath);
  let metrics: Record<string, unknown> | null = null;
  if (metricsText !== null) {
    let value: unknown;
    try {
      value = JSON.parse(metricsText);
    } catch (e) {
      throw new GoldenError(`damaged golden ${metricsPath}: ${describeJsonError(metricsText, e)}`);
    }
    if (!isObject(value)) throw new GoldenError(`damaged golden ${metricsPath}: expected an object of metric name → value`);
    const problem = findJsonValueProblem(value);
    if (problem) throw new GoldenError(`damaged golden ${metricsPath}: ${describeJsonValueProblem(problem)}`);
    metrics = value;
  }
  return { samplesJsonl, metrics };
}

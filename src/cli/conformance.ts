/**
 * `npm run conformance`: runs every case of a conformance file through the generic adapter.
 *
 * The file is the one named by the environment variable `CONFORMANCE_CASES` (a path relative to the current
 * directory), else the project's own copy among the test fixtures. Each failure is printed with its id and
 * reason, then `K reference-only`, then the last line `N passed, M failed`. Exit status 1 when a case failed or
 * the file cannot be read or parsed.
 */

import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { isEntryPoint } from "./entry.js";
import { parseCaseFile, runCases, type ConformanceCase } from "../conformance/adapter.js";

const DEFAULT_CASES_FILE = fileURLToPath(new URL("../conformance/fixtures/conformance-cases.json", import.meta.url));

export function main(_argv: string[] = []): number {
  const fromEnv = process.env.CONFORMANCE_CASES;
  const file = fromEnv ? resolve(process.cwd(), fromEnv) : DEFAULT_CASES_FILE;
  let cases: ConformanceCase[];
  try {
    cases = parseCaseFile(readFileSync(file, "utf8"));
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    console.error(`conformance: cannot use case file ${file}${fromEnv ? " (from CONFORMANCE_CASES)" : ""}: ${why}`);
    return 1;
  }
  const summary = runCases(cases);
  for (const f of summary.failures) console.log(`FAIL ${f.id}: ${f.reason}`);
  console.log(`${summary.referenceOnly} reference-only`);
  console.log(`${summary.passed} passed, ${summary.failed} failed`);
  return summary.failed > 0 ? 1 : 0;
}

if (isEntryPoint(import.meta.url)) process.exitCode = main(process.argv.slice(2));

/**
 * Merges the reports of a sharded run (`--shard 1/n` … `--shard n/n`, each on its own machine) into the report of
 * the whole suite, as one unsharded run would have written it (apart from `seconds`, the shards' sum). The shards
 * must be of one suite (same scenarios and tolerances) and one backend, and complementary: each of 1…n exactly
 * once, each covering exactly its scenarios. Pure: the caller reads the files.
 */

import { LabError } from "../core/index.js";
import type { RegressReport } from "./report-json.js";
import { formatShard, scenarioName, selectShard, type Shard } from "./suite.js";

/** Shard reports that do not merge; the message names the problem and the reports. */
export class MergeError extends LabError {
  override name = "MergeError";
  override readonly code = "merge_failed";
}

export interface ShardReport {
  /** Where the report came from (its output folder), for messages. */
  source: string;
  report: RegressReport;
}

const label = (shard: Shard | null): string => (shard ? `shard ${formatShard(shard)}` : "the whole suite (run without --shard)");
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** Why `b` is not of `a`'s suite and backend, or null. */
function mismatch(a: ShardReport, b: ShardReport): string | null {
  const [x, y] = [a.report, b.report];
  const whose = `${b.source} (suite ${y.suite.file}) is from a different suite than ${a.source} (suite ${x.suite.file})`;
  if (!same(x.suite.scenarios, y.suite.scenarios)) {
    return `${whose}: its scenarios are ${y.suite.scenarios.join(", ")}; the other's ${x.suite.scenarios.join(", ")}`;
  }
  if (!same(Object.entries(x.suite.tolerances).sort(), Object.entries(y.suite.tolerances).sort())) {
    return `${whose}: its tolerances are ${JSON.stringify(y.suite.tolerances)}; the other's ${JSON.stringify(x.suite.tolerances)}`;
  }
  if (x.backend !== y.backend || x.defaultTolerance !== y.defaultTolerance || x.repeat !== y.repeat) {
    const on = (r: RegressReport) => `backend ${r.backend} (default tolerance ${r.defaultTolerance}, ${r.repeat} run${r.repeat === 1 ? "" : "s"} each)`;
    return `${b.source} ran on ${on(y)} but ${a.source} on ${on(x)}`;
  }
  return null;
}

export function mergeReports(shards: readonly ShardReport[]): RegressReport {
  const first = shards[0];
  if (!first) throw new MergeError("no shard reports to merge");
  const count = first.report.shard?.count ?? 1;
  const byIndex = new Map<number, string>();
  for (const s of shards) {
    const problem = mismatch(first, s);
    if (problem) throw new MergeError(problem);
    const shard = s.report.shard;
    if ((shard?.count ?? 1) !== count) throw new MergeError(`${s.source} is ${label(shard)} but ${first.source} is ${label(first.report.shard)}`);
    const index = shard?.index ?? 1;
    const twice = byIndex.get(index);
    if (twice !== undefined) throw new MergeError(`${label(shard)} appears twice: ${twice} and ${s.source}`);
    byIndex.set(index, s.source);
    const expected = selectShard(s.report.suite.scenarios, shard).map(scenarioName).sort();
    const covered = [...s.report.comparisons, ...s.report.failed].map((c) => c.name).sort();
    if (!same(expected, covered)) {
      throw new MergeError(`${s.source}: ${label(shard)} should cover ${expected.join(", ")} but reports ${covered.join(", ") || "nothing"}`);
    }
  }
  const missing = Array.from({ length: count }, (_, k) => k + 1).filter((i) => !byIndex.has(i));
  if (missing.length) {
    const names = missing.map((i) => `shard ${i}/${count}`).join(", ");
    throw new MergeError(`${names} ${missing.length === 1 ? "is" : "are"} missing (merging ${[...byIndex.values()].join(", ")})`);
  }
  const order = first.report.suite.scenarios.map(scenarioName);
  const inSuiteOrder = <T extends { name: string }>(items: T[]): T[] => items.sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name));
  const seconds = shards.reduce((sum, s) => sum + s.report.seconds, 0);
  return {
    ...first.report,
    shard: null,
    comparisons: inSuiteOrder(shards.flatMap((s) => s.report.comparisons)),
    failed: inSuiteOrder(shards.flatMap((s) => s.report.failed)),
    seconds: Math.round(seconds * 10) / 10,
  };
}

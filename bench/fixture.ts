/**
 * The finished runs the page and memory benchmarks open: the fixture scenario (src/bench-support/page-fixture.ts)
 * run headless in Node into the lab's own run model, its assistant messages given a model's kind of
 * log-probabilities, and exported as the lab exports a run (JSONL, src/app/run/jsonl.ts). Kept under
 * bench/results/fixtures/ (not committed) and rebuilt when missing.
 */

import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { exportJsonl } from "../src/app/run/jsonl.js";
import { RunModel } from "../src/app/run/run-model.js";
import { fixtureLogprobs, fixtureScenario, type FixtureConfig } from "../src/bench-support/page-fixture.js";
import { runScenario } from "../src/scenario/run.js";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const FIXTURE_VERSION = 1;

/** Runs the fixture scenario into a run model (as the page would show it live), with a model's log-probabilities. */
export async function fixtureRun(cfg: FixtureConfig): Promise<{ model: RunModel; scenario: ReturnType<typeof fixtureScenario> }> {
  const scenario = fixtureScenario(cfg);
  const model = new RunModel();
  await runScenario(scenario, { onEvent: (e) => model.apply(e) });
  for (const s of model.samples) {
    for (const t of s.turns) {
      const m = t?.assistantIndex == null ? null : s.messages[t.assistantIndex];
      if (m?.generation_logprobs) m.generation_logprobs = fixtureLogprobs(cfg.seed, s.sample, t.turn, m.generation_logprobs.length);
    }
  }
  const ended = new Set(model.samples.map((s) => `${s.termination}:${s.turns.length}`));
  if (ended.size !== 1 || !ended.has(`max_turns:${cfg.turns}`)) throw new Error(`the fixture did not run ${cfg.turns} turns everywhere: ${[...ended].join(", ")}`);
  return { model, scenario };
}

/** The JSONL export of the fixture run (written once, then reused). */
export async function fixtureFile(cfg: FixtureConfig): Promise<string> {
  const dir = join(root, "bench/results/fixtures");
  const file = join(dir, `run-${cfg.samples}x${cfg.turns}-seed${cfg.seed}-v${FIXTURE_VERSION}.jsonl`);
  if (existsSync(file)) return file;
  const { model, scenario } = await fixtureRun(cfg);
  mkdirSync(dir, { recursive: true });
  writeFileSync(file, exportJsonl(model, scenario));
  return file;
}

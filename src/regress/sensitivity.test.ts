/**
 * The default float tolerance is loose enough for rounding (other CPUs, WASM, WebGPU: compare.ts) and tight
 * enough that real changes fail: the sample suite's tiny-model scenario, run against its committed golden with
 * the model changed a little — one weight, one logit-shaping bias — regresses, while the unchanged model (built
 * the same way, as a local folder) passes. Each change's largest logprob shift is checked to be well beyond the
 * tolerance, so the verdict does not hang on one token.
 */

import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeRunOptions } from "../cli/node-run.js";
import { buildModelFiles } from "../policy/builtin-model/build.js";
import { encodeDecoderModel } from "../policy/builtin-model/decoder-graph.js";
import { PRESETS, type ModelPreset } from "../policy/builtin-model/presets.js";
import { generateWeights, type ModelWeights } from "../policy/builtin-model/weights.js";
import { writeModelFolder } from "../policy/builtin-model/write-folder.js";
import { runScenario } from "../scenario/run.js";
import { parseScenarioText } from "../scenario/schema.js";
import { withoutTiming } from "../scenario/result.js";
import { compareScenario, DEFAULT_FLOAT_TOLERANCE, toJsonl } from "./compare.js";

const root = resolve(import.meta.dirname, "../..");
const NAME = "puzzle-tiny-model-greedy";

/** The tiny model's folder, with its preset or weights changed by `change`. */
function variantFiles(change: { preset?: Partial<ModelPreset>; weights?: (w: ModelWeights) => void }) {
  const preset = { ...PRESETS.tiny, ...change.preset };
  const files = buildModelFiles(preset, 0);
  const weights = generateWeights(preset, 0);
  change.weights?.(weights);
  files.set("onnx/model.onnx", encodeDecoderModel(preset, weights));
  return files;
}

function logprobs(jsonl: string): number[] {
  return jsonl
    .trim()
    .split("\n")
    .flatMap((line) => (JSON.parse(line) as { message_log: { generation_logprobs?: number[] }[] }).message_log.flatMap((m) => m.generation_logprobs ?? []));
}

describe("the default tolerance against real changes of the model", () => {
  let dir: string;
  let golden: { samplesJsonl: string; metrics: Record<string, unknown> };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "regress-sensitivity-"));
    const goldenDir = join(root, "regress/goldens", NAME);
    golden = {
      samplesJsonl: await readFile(join(goldenDir, "samples.jsonl"), "utf8"),
      metrics: JSON.parse(await readFile(join(goldenDir, "metrics.json"), "utf8")) as Record<string, unknown>,
    };
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  /** Runs the suite's scenario with the model at `models/variant/<name>` and compares it with the golden. */
  async function runWith(name: string, files: ReturnType<typeof buildModelFiles>) {
    writeModelFolder(join(dir, "models"), `variant/${name}`, files);
    const scenario = parseScenarioText(await readFile(join(root, "regress/scenarios", `${NAME}.json`), "utf8"), NAME);
    const path = join(dir, `${name}.json`);
    const local = { ...scenario, policy: { ...scenario.policy, model: `./models/variant/${name}` } };
    await writeFile(path, JSON.stringify(local));
    const result = await runScenario(local as typeof scenario, await nodeRunOptions(path));
    const run = { samplesJsonl: toJsonl(result.samples), metrics: JSON.parse(JSON.stringify(withoutTiming(result.metrics))) as Record<string, unknown> };
    // The largest logprob shift; a different number of tokens is a change beyond any tolerance.
    const [ours, theirs] = [logprobs(run.samplesJsonl), logprobs(golden.samplesJsonl)];
    const shift = ours.length !== theirs.length ? Infinity : Math.max(...ours.map((x, i) => Math.abs(x - theirs[i]!)));
    return { comparison: compareScenario(NAME, run, golden), shift };
  }

  it("passes the unchanged model (the control)", async () => {
    const { comparison, shift } = await runWith("unchanged", variantFiles({}));
    expect(comparison.status).toBe("ok");
    expect(shift).toBeLessThan(DEFAULT_FLOAT_TOLERANCE / 10);
  }, 60_000);

  it("fails one changed weight (lm_head's entry from hidden unit 0 to the space token, from −0.245 to +0.255; entries are drawn in ±0.375)", async () => {
    const space = 32;
    const { comparison, shift } = await runWith("weight", variantFiles({ weights: (w) => void (w.lmHead[space] = w.lmHead[space]! + 0.5) }));
    expect(comparison.status).toBe("regressed");
    expect(comparison.samples?.kind === "float" || comparison.samples?.kind === "tokens").toBe(true);
    expect(shift).toBeGreaterThan(5 * DEFAULT_FLOAT_TOLERANCE);
  }, 60_000);

  it("fails a changed logit-shaping bias (the end-of-turn bias 2.5 → 2.4 nats)", async () => {
    const { comparison, shift } = await runWith("eos-bias", variantFiles({ preset: { eosBias: 2.4 } }));
    expect(comparison.status).toBe("regressed");
    expect(shift).toBeGreaterThan(5 * DEFAULT_FLOAT_TOLERANCE);
  }, 60_000);

  it("fails a changed final norm (every gain 1 → 1.01: the logits' scale, as a changed temperature in the model would)", async () => {
    const { comparison, shift } = await runWith("norm", variantFiles({ weights: (w) => void w.norm.fill(1.01) }));
    expect(comparison.status).toBe("regressed");
    expect(shift).toBeGreaterThan(5 * DEFAULT_FLOAT_TOLERANCE);
  }, 60_000);
});

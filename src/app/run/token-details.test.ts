/**
 * A model run's per-token step details (entropy, top alternatives) reach the page's run model through the path the
 * page's events take (the worker's batcher, a structured clone as postMessage makes), beside the turns and never in
 * the messages, the result or an export.
 */

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Message, RolloutEvent, TokenStepDetail } from "../../core/index.js";
import type { ModelPolicy } from "../../policy/llm/model-policy.js";
import { loadNodeModelPolicy } from "../../policy/llm/node.js";
import { runScenario } from "../../scenario/run.js";
import { parseScenario } from "../../scenario/schema.js";
import calculator from "../../scenario/examples/calculator-scripted.json";
import { EventBatcher } from "../worker/event-batch.js";
import type { PackedEvent } from "./compact-messages.js";
import { exportJsonl } from "./jsonl.js";
import { RunModel, tokenDetailAt, type TurnView } from "./run-model.js";

const modelsRoot = mkdtempSync(join(tmpdir(), "rollout-lab-details-"));
const policies: ModelPolicy[] = [];
afterAll(async () => {
  for (const p of policies) await p.dispose();
});

const modelScenario = (mode: "sync" | "async", greedy: boolean) => ({
  mode,
  max_seq_len: 2048,
  max_rollout_turns: 2,
  max_new_tokens: 10,
  greedy,
  envs: { sliding_puzzle_game: { env: "sliding_puzzle", config: {} } },
  dataset: { task_name: "sliding_puzzle_game", size: 2, seed: 4, config: { size: 2, shuffle_moves: 3, max_moves: 5 } },
  policy: { kind: "model", model: "builtin:tiny", seed: 3 },
});

/** Runs a scenario with the page's transport: batched by the worker's batcher, cloned as postMessage clones. */
async function runThroughPage(source: unknown) {
  const scenario = parseScenario(source);
  const model = new RunModel();
  const tokens: Extract<RolloutEvent, { type: "token" }>[] = [];
  const batcher = new EventBatcher((_runId, events: PackedEvent[], transfer) => {
    for (const e of structuredClone(events, { transfer })) model.apply(e);
  });
  const result = await runScenario(scenario, {
    onEvent: (e) => {
      if (e.type === "token") tokens.push(structuredClone(e));
      batcher.push(1, e);
    },
    modelPolicy: async (spec) => {
      const policy = await loadNodeModelPolicy({ ...spec, modelsRoot });
      policies.push(policy);
      // Disposed after the test (afterAll): the run's own dispose has nothing to free.
      return { generation: policy, tokenizer: policy.tokenizer, dispose: async () => {} };
    },
  });
  batcher.flush();
  return { scenario, model, tokens, result };
}

const MESSAGE_KEYS = new Set(["role", "content", "token_ids", "generation_logprobs", "invalid_action_violations"]);

describe("token details on the page's event path", () => {
  for (const [mode, greedy] of [["sync", true], ["async", false]] as const) {
    it(`${mode}${greedy ? ", greedy" : ", sampled"}: every generated token's detail is kept beside its turn, as the policy sent it`, async () => {
      const { scenario, model, tokens, result } = await runThroughPage(modelScenario(mode, greedy));
      let checked = 0;
      for (const s of model.samples) {
        const streamed = tokens.filter((e) => e.sample === s.sample);
        for (const t of s.turns) {
          const message = s.messages[t.assistantIndex!]!;
          const events = streamed.filter((e) => e.turn === t.turn);
          expect(events.map((e) => e.tokenId)).toEqual(message.token_ids);
          expect(t.tokenDetails, `sample ${s.sample} turn ${t.turn}`).toBeDefined();
          expect(t.tokenDetails!.count).toBe(message.token_ids.length);
          events.forEach((e, i) => {
            expect(e.detail!.top).toHaveLength(5);
            expect(tokenDetailAt(t.tokenDetails!, i)).toEqual(e.detail);
            checked += 1;
          });
          // The greedy token is the first alternative, with the message's own log-probability.
          if (greedy) message.token_ids.forEach((id, i) => expect(tokenDetailAt(t.tokenDetails!, i)!.top[0]).toMatchObject({ tokenId: id, logprob: message.generation_logprobs![i] }));
        }
      }
      expect(checked).toBeGreaterThan(0);
      // Lab-only: no message of the result or the export carries any of it.
      for (const s of result.samples) for (const m of s.message_log) for (const key of Object.keys(m)) expect(MESSAGE_KEYS.has(key)).toBe(true);
      for (const s of model.samples) for (const m of s.messages) for (const key of Object.keys(m)) expect(MESSAGE_KEYS.has(key)).toBe(true);
      const exported = exportJsonl(model, scenario);
      expect(exported).not.toMatch(/entropy|tokenDetails|"top"/);
    }, 60_000);
  }

  it("a text policy's run keeps no details (its tokens come with none)", async () => {
    const { model, tokens } = await runThroughPage(calculator);
    expect(tokens.length).toBeGreaterThan(0);
    expect(tokens.every((e) => e.detail === undefined)).toBe(true);
    for (const s of model.samples) for (const t of s.turns) expect(t.tokenDetails).toBeUndefined();
  });
});

const detail = (id: number): TokenStepDetail => ({
  entropy: id / 10,
  top: [
    { tokenId: id, logprob: -0.5, text: `t${id}` },
    { tokenId: id + 100, logprob: -1.5, text: `t${id + 100}` },
  ],
});

/** A one-sample run model at its first turn's generation. */
function generating() {
  const model = new RunModel();
  model.apply({
    type: "rollout_start",
    t: 0,
    mode: "sync",
    samples: [{ sample: 0, idx: 0, task_name: "x", message_log: [{ role: "user", content: "hi", token_ids: [1, 2] }], extra_env_info: null }],
    maxRolloutTurns: 1,
    maxSeqLen: 100,
  });
  model.apply({ type: "turn_start", t: 1, sample: 0, turn: 0, inputTokens: 2 });
  const stream = (ids: number[]) => ids.forEach((id) => model.apply({ type: "token", t: 2, sample: 0, turn: 0, tokenId: id, text: "x", detail: detail(id) }));
  const answer = (ids: number[]) => {
    const message: Message = { role: "assistant", content: "", token_ids: ids, generation_logprobs: ids.map(() => -0.5) };
    model.apply({ type: "assistant_message", t: 3, sample: 0, turn: 0, message, truncated: false });
    return model.samples[0]!.turns[0]!;
  };
  return { stream, answer };
}

describe("RunModel's token details", () => {
  it("a turn generated again (its tokens streamed twice) keeps the last stream's details, aligned to the message", () => {
    const { stream, answer } = generating();
    stream([5, 6, 7]);
    stream([8, 9]);
    const t = answer([8, 9]);
    expect([0, 1].map((i) => tokenDetailAt(t.tokenDetails!, i))).toEqual([detail(8), detail(9)]);
    expect(tokenDetailAt(t.tokenDetails!, 2)).toBeNull();
  });

  it("streamed tokens that are not the message's give no details, with why", () => {
    const { stream, answer } = generating();
    stream([5, 6]);
    const t: TurnView = answer([5, 7]);
    expect(t.tokenDetails).toBeUndefined();
    expect(t.tokenDetailsMissing).toMatch(/not the message's tokens/);
  });

  it("survive a structured clone (a fork copies its kept turns so)", () => {
    const { stream, answer } = generating();
    stream([3, 4]);
    const copy = structuredClone(answer([3, 4]));
    expect(tokenDetailAt(copy.tokenDetails!, 1)).toEqual(detail(4));
  });
});

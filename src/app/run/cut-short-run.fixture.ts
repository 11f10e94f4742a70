/**
 * Test fixture: a real sync rollout on 2×2 sliding puzzles, cut short as a crash or a closed page cuts it. Sample 0
 * may make no move (it ends after its first turn); the others go on, so at the third turn's start sample 0 is done
 * and the rest are under way.
 */

import { byteLevelTokenizer, type RolloutEvent } from "../../core/index.js";
import { TextPolicy } from "../../policy/text-policy.js";
import { runScenario } from "../../scenario/run.js";
import { parseScenario, type Scenario } from "../../scenario/schema.js";
import { RunModel } from "./run-model.js";

const board = { size: 2, grid: [[1, 2], [0, 3]], solution: [[1, 2], [3, 0]], empty_pos: [1, 0], commands: {} };

/** The scenario of `samples` puzzles (at least 2): the first allows no move, the others 30. */
export function cutShortScenario(samples: number): Scenario {
  return parseScenario({
    mode: "sync",
    max_seq_len: 4096,
    max_rollout_turns: 4,
    envs: { t: { env: "sliding_puzzle", config: {} } },
    samples: Array.from({ length: samples }, (_, i) => ({
      task_name: "t",
      message_log: [{ role: "user", content: "move" }],
      extra_env_info: { game_state: board, num_moves: 0, max_moves: i === 0 ? 0 : 30 },
    })),
    policy: { kind: "scripted", responses: [[]] },
  });
}

/** A run model fed the events of the scenario's rollout up to the third turn's start. */
export async function cutShortRun(scenario: Scenario): Promise<RunModel> {
  const events: RolloutEvent[] = [];
  const policy = new TextPolicy(byteLevelTokenizer, ({ sampleId, turn }) => `s${sampleId} t${turn} <action>view</action>`);
  await runScenario(scenario, { onEvent: (e) => events.push(e), policyOverride: { generation: policy, tokenizer: byteLevelTokenizer } });
  const cut = events.findIndex((e) => e.type === "turn_start" && e.turn === 2);
  const model = new RunModel();
  for (const e of events.slice(0, cut + 1)) model.apply(e);
  return model;
}

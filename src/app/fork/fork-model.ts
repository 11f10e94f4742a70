/**
 * What a fork looks like in the lab: one sample whose transcript is the original's kept turns followed by the
 * fork's own turns, numbered on from the original's (the fork's turn j is turn `firstNewTurn + j`). It is a plain
 * `RunModel`, so every view (batch, transcript, tokens, environment, metrics, timeline, compare, export) shows it
 * as it shows a run.
 *
 * The kept turns are copies of the original's (their messages, rewards, violations, environment states and
 * timings); for an observation edit, the forked turn keeps its reward and state and shows the edited observation.
 * The fork's rollout events are mapped onto it: sample 0, turn + firstNewTurn, times after the kept turns' end,
 * total reward and turn count including the kept turns'.
 *
 * Metrics: when the fork's rollout ends, the model's metrics are the path's metric keys computed (with the live
 * formulas) over the whole forked episode, kept turns included, so they read like a one-sample run of the same
 * episode. The fork's own rollout (its scenario, run from the fork point) has its own result, with only the new
 * turns: its `total_reward`, turn and token counts, `truncated`, violation counts and metrics cover those alone.
 * The final batch (what an export writes beside the messages) is that result's, with `total_reward` set to the
 * whole episode's.
 */

import type { PackedEvent } from "../run/compact-messages.js";
import { liveMetrics } from "../run/live-metrics.js";
import { RunModel, type RunSummary, type SampleView } from "../run/run-model.js";
import type { ForkPlan } from "./fork-scenario.js";

export interface ForkedRun {
  model: RunModel;
  /** Applies one event of the fork's rollout. */
  apply(event: PackedEvent): void;
}

export function forkedRunModel(source: { sample: SampleView; summary: RunSummary }, plan: ForkPlan): ForkedRun {
  const { sample, summary } = source;
  const model = new RunModel();
  model.apply({
    type: "rollout_start",
    t: 0,
    mode: summary.mode ?? "sync",
    samples: [
      {
        sample: 0,
        idx: sample.idx,
        task_name: sample.task,
        message_log: sample.messages.slice(0, sample.promptMessages),
        extra_env_info: sample.initialMetadata,
        ...(sample.initialStopStrings !== undefined ? { stop_strings: sample.initialStopStrings } : {}),
      },
    ],
    maxRolloutTurns: summary.maxRolloutTurns,
    maxSeqLen: summary.maxSeqLen,
  });
  const s = model.samples[0]!;
  const kept = structuredClone(sample.turns.slice(0, plan.keptTurns));
  const lastKept = kept.at(-1);
  const end = lastKept ? (lastKept.observationIndex ?? lastKept.assistantIndex ?? sample.promptMessages - 1) + 1 : sample.promptMessages;
  s.messages = structuredClone(sample.messages.slice(0, end));
  if (plan.editedObservation && lastKept?.observationIndex != null) s.messages[lastKept.observationIndex] = structuredClone(plan.editedObservation);
  s.turns = kept;
  const keptReward = kept.reduce((total, t) => total + (t?.reward ?? 0), 0);
  s.totalReward = keptReward;
  const offsetT = Math.max(0, ...kept.map((t) => t?.envEnd ?? t?.genEnd ?? t?.genStart ?? 0));
  model.summary.lastT = offsetT;
  const turnOffset = plan.firstNewTurn;
  const invalidActionEnabled = Boolean(plan.scenario.invalid_action?.enabled);

  const apply = (event: PackedEvent) => {
    const t = event.t + offsetT;
    switch (event.type) {
      case "rollout_start":
        model.version += 1;
        return;
      case "turn_start":
      case "token":
      case "assistant_message":
      case "env_step":
        model.apply({ ...event, t, sample: 0, turn: event.turn + turnOffset });
        return;
      case "sample_end":
        model.apply({ ...event, t, sample: 0, totalReward: event.totalReward + keptReward, turns: event.turns + turnOffset });
        return;
      case "rollout_end": {
        const batch = { ...event.batch, total_reward: [s.totalReward] };
        model.apply({ ...event, t, batch, metrics: {} });
        model.summary.metrics = null;
        const whole = liveMetrics(model, { invalidActionEnabled });
        model.summary.metrics = whole;
        return;
      }
      case "rollout_error":
        model.apply({ ...event, t });
        return;
    }
  };
  return { model, apply };
}

/**
 * The live state of one run, built from the core's event stream alone (so a replayed or imported run looks the same
 * as a live one). It is a plain mutable object kept outside React's state: components read it, and subscribe to a
 * version number that the store bumps at most once per animation frame (large payloads stay out of reactive state).
 */

import type { Message, Metadata, RolloutEvent, RolloutMode, TerminationReason, Violation } from "../../core/index.js";

export type SampleState = "waiting" | "generating" | "environment" | "done";

/** One turn of one sample: its spans on the timeline, what it produced and what the environment answered. */
export interface TurnView {
  turn: number;
  /** Milliseconds since the run started. */
  genStart: number;
  genEnd: number | null;
  envEnd: number | null;
  inputTokens: number;
  /** Text streamed so far (before the assistant message arrives). */
  streamed: string;
  streamedTokens: number;
  /** Indices into the sample's `messages`. */
  assistantIndex: number | null;
  observationIndex: number | null;
  responseTruncated: boolean;
  reward: number | null;
  rewardComponents: Record<string, number> | null;
  terminated: boolean;
  truncatedContext: boolean;
  violations: Violation[];
  /** The environment state after this turn (what the environment view draws). */
  metadata: Metadata;
  /** The stop strings the next turn uses, from the env step (undefined in runs recorded without them). */
  stopStrings?: string[] | null;
}

export interface SampleView {
  sample: number;
  idx: number;
  task: string;
  state: SampleState;
  messages: Message[];
  /** The number of prompt messages at the start of `messages`. */
  promptMessages: number;
  initialMetadata: Metadata;
  /** The first turn's stop strings (undefined in runs recorded without them). */
  initialStopStrings?: string[] | null;
  turns: TurnView[];
  totalReward: number;
  termination: TerminationReason | null;
  error: string | null;
}

export interface RunSummary {
  mode: RolloutMode | null;
  maxRolloutTurns: number;
  maxSeqLen: number;
  startedAt: number;
  status: "running" | "finished" | "failed";
  partial: boolean;
  /** The rollout's own metrics, once it ended. */
  metrics: Record<string, unknown> | null;
  error: string | null;
  /** Wall time of the last event (ms since start). */
  lastT: number;
}

export class RunModel {
  readonly samples: SampleView[] = [];
  readonly summary: RunSummary = {
    mode: null,
    maxRolloutTurns: 0,
    maxSeqLen: 0,
    startedAt: Date.now(),
    status: "running",
    partial: false,
    metrics: null,
    error: null,
    lastT: 0,
  };
  /** The final batch (output keys per sample), for export. */
  finalBatch: Record<string, unknown[]> | null = null;
  version = 0;

  apply(event: RolloutEvent): void {
    this.version += 1;
    this.summary.lastT = Math.max(this.summary.lastT, event.t);
    switch (event.type) {
      case "rollout_start":
        this.summary.mode = event.mode;
        this.summary.maxRolloutTurns = event.maxRolloutTurns;
        this.summary.maxSeqLen = event.maxSeqLen;
        this.samples.length = 0;
        for (const s of event.samples) {
          this.samples.push({
            sample: s.sample,
            idx: s.idx,
            task: s.task_name,
            state: "waiting",
            messages: [...s.message_log],
            promptMessages: s.message_log.length,
            initialMetadata: s.extra_env_info,
            ...(s.stop_strings !== undefined ? { initialStopStrings: s.stop_strings } : {}),
            turns: [],
            totalReward: 0,
            termination: null,
            error: null,
          });
        }
        return;
      case "turn_start": {
        const s = this.samples[event.sample]!;
        s.state = "generating";
        s.turns[event.turn] = {
          turn: event.turn,
          genStart: event.t,
          genEnd: null,
          envEnd: null,
          inputTokens: event.inputTokens,
          streamed: "",
          streamedTokens: 0,
          assistantIndex: null,
          observationIndex: null,
          responseTruncated: false,
          reward: null,
          rewardComponents: null,
          terminated: false,
          truncatedContext: false,
          violations: [],
          metadata: null,
        };
        return;
      }
      case "token": {
        const t = this.samples[event.sample]?.turns[event.turn];
        if (!t) return;
        t.streamed += event.text;
        t.streamedTokens += 1;
        return;
      }
      case "assistant_message": {
        const s = this.samples[event.sample]!;
        const t = s.turns[event.turn]!;
        s.messages.push(event.message);
        t.assistantIndex = s.messages.length - 1;
        t.genEnd = event.t;
        t.responseTruncated = event.truncated;
        s.state = "environment";
        return;
      }
      case "env_step": {
        const s = this.samples[event.sample]!;
        const t = s.turns[event.turn]!;
        if (t.assistantIndex !== null && event.violations.length) {
          s.messages[t.assistantIndex] = { ...s.messages[t.assistantIndex]!, invalid_action_violations: event.violations };
        }
        s.messages.push(event.observation);
        t.observationIndex = s.messages.length - 1;
        t.envEnd = event.t;
        t.reward = event.reward;
        t.rewardComponents = event.rewardComponents;
        t.terminated = event.terminated;
        t.truncatedContext = event.truncatedContext;
        t.violations = event.violations;
        t.metadata = event.metadata;
        if (event.stopStrings !== undefined) t.stopStrings = event.stopStrings;
        s.totalReward += event.reward;
        s.state = "waiting";
        return;
      }
      case "sample_end": {
        const s = this.samples[event.sample]!;
        s.state = "done";
        s.termination = event.termination;
        s.error = event.error;
        s.totalReward = event.totalReward;
        const open = s.turns.at(-1);
        if (open && open.genEnd === null) open.genEnd = event.t;
        return;
      }
      case "rollout_end":
        this.summary.status = "finished";
        this.summary.partial = event.partial;
        this.summary.metrics = event.metrics;
        this.finalBatch = event.batch;
        return;
      case "rollout_error":
        this.summary.status = "failed";
        this.summary.error = event.error;
        return;
    }
  }

  /** The environment state a sample is in after `turn` (its initial state before the first turn). */
  metadataAt(sample: number, turn: number | null): Metadata {
    const s = this.samples[sample];
    if (!s) return null;
    if (turn === null || turn < 0) return s.initialMetadata;
    for (let t = Math.min(turn, s.turns.length - 1); t >= 0; t--) {
      const m = s.turns[t]?.metadata;
      if (m) return m;
    }
    return s.initialMetadata;
  }
}

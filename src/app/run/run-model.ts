/**
 * The live state of one run, built from the core's event stream alone (so a replayed or imported run looks the same
 * as a live one). It is a plain mutable object kept outside React's state: views read it, and subscribe to it
 * (`subscribe`, `snapshot`): whoever changes it publishes the change (large payloads stay out of reactive state).
 *
 * Messages are stored compactly (src/app/run/compact-messages.ts): each sample's token ids and log-probabilities sit
 * in two typed arrays of its own, and a message's `token_ids` / `generation_logprobs` read as fresh plain arrays.
 * Readers that only count tokens use `tokenCount` (re-exported here).
 */

import type { EnvironmentMetrics } from "../../scenario/environment-metrics.js";
import type { ForkContinuation } from "../../policy/fork-policy.js";
import type { Message, Metadata, RolloutEvent, RolloutMode, TerminationReason, TokenId, TokenIds, TokenStepDetail } from "../../core/index.js";
import {
  compactMessage,
  packOf,
  packTokenDetails,
  TokenPack,
  tokenIdsView,
  withKeys,
  type PackedEvent,
  type PackedMessage,
  type PackedSamples,
  type TokenDetails,
} from "./compact-messages.js";

export { tokenCount, tokenDetailAt, type TokenDetails } from "./compact-messages.js";

export type SampleState = "waiting" | "generating" | "environment" | "done";

type EnvStepEvent = Extract<RolloutEvent, { type: "env_step" }>;

/** What the environment answered in a turn: the core's `env_step` fields, as they are before it answered. */
type EnvAnswer = Pick<EnvStepEvent, "rewardComponents" | "terminated" | "truncatedContext" | "violations" | "metadata" | "stopStrings">;

/** One turn of one sample: its spans on the timeline, what it produced and what the environment answered. */
export interface TurnView extends EnvAnswer {
  turn: number;
  /** Milliseconds since the run started. */
  genStart: number;
  genEnd: number | null;
  envEnd: number | null;
  inputTokens: number;
  /** Text streamed so far (before the assistant message arrives; emptied when it does, which supersedes it). */
  streamed: string;
  streamedTokens: number;
  /** Indices into the sample's `messages`. */
  assistantIndex: number | null;
  observationIndex: number | null;
  responseTruncated: boolean;
  /** Null until the environment answered. */
  reward: number | null;
  /**
   * The assistant message's per-token step details (entropy, top alternatives), when its policy streamed them (a
   * model policy, run live in this page): lab-only, never in the messages. Absent when none were recorded.
   */
  tokenDetails?: TokenDetails;
  /** Why a turn whose tokens streamed with details has none (its streamed tokens are not the message's). */
  tokenDetailsMissing?: string;
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
  /** The environments' own metrics after the run (their `global_post_process_and_metrics`), when they have any. */
  environmentMetrics: EnvironmentMetrics[] | null;
  /**
   * A fork's run: how its policy continued the original's (the original sample's row and turn numbers, an edited
   * first response). Not in the scenario (it has no key for it): kept with the run, exported beside its scenario, so
   * Run again and a fork of it continue as the fork did.
   */
  forkContinuation: ForkContinuation | null;
  error: string | null;
  /** Wall time of the last event (ms since start). */
  lastT: number;
}

/** A run model as published: the same model, and the version it was at (a new object for each version). */
export interface RunSnapshot {
  readonly model: RunModel;
  readonly version: number;
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
    environmentMetrics: null,
    forkContinuation: null,
    error: null,
    lastT: 0,
  };
  /**
   * The final batch (output keys per sample), for export; without its `message_log` column: the samples' `messages`
   * are the message logs (the live worker does not send the column; an import's is the samples' own lines).
   */
  finalBatch: Record<string, unknown[]> | null = null;
  /** Bumped by every change. */
  version = 0;
  /**
   * What the views draw (`useRun`): an immutable token of the version `publish` last announced, so a view's memo
   * recomputes from this mutable model exactly when it publishes. A live run publishes at most once per frame (its
   * session's render budget), so 200 events a second cost a few renders a second.
   */
  snapshot: RunSnapshot = { model: this, version: 0 };
  private listeners = new Set<() => void>();

  /** Calls `listener` each time a new snapshot is published (for `useSyncExternalStore`). */
  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  /** Announces the changes made since the last call to the views. */
  publish(): void {
    if (this.snapshot.version === this.version) return;
    this.snapshot = { model: this, version: this.version };
    for (const listener of [...this.listeners]) listener();
  }

  /** Each sample's token ids and log-probabilities (by sample index). */
  private packs: TokenPack[] = [];

  /**
   * The details of the tokens a turn is streaming, until its assistant message arrives: from the first token that
   * came with one (`from`: its index among the turn's streamed tokens), every streamed token's id and detail.
   */
  private streaming = new Map<TurnView, { from: number; ids: TokenId[]; details: (TokenStepDetail | undefined)[] }>();
  /** The alternatives' texts, by id, for every turn's details. */
  private detailTexts = new Map<TokenId, string>();

  private pack(sample: number): TokenPack {
    let pack = this.packs[sample];
    if (!pack) {
      pack = this.packs[sample] = new TokenPack();
      pack.owner = this;
    }
    return pack;
  }

  /**
   * A sample's pack: the one its prompt's compact messages are in when nobody appends to it (an import's sample,
   * ./jsonl-offthread.ts: its messages are then kept as they are, not copied), else a new one.
   */
  private adoptPack(sample: number, prompt: readonly PackedMessage[]): TokenPack {
    const first = prompt[0] ? packOf(prompt[0]) : null;
    if (first && first.owner === null && prompt.every((m) => packOf(m) === first)) {
      first.owner = this;
      this.packs[sample] = first;
      return first;
    }
    return this.pack(sample);
  }

  /**
   * Adds samples after the run's start, as if `rollout_start` had listed them after the others (an import shown while
   * its file is still being read: ./preview-import.ts); each one's `sample` is its index, `samples.length` before it.
   */
  appendSamples(samples: PackedSamples): void {
    this.version += 1;
    this.addSamples(samples);
  }

  private addSamples(samples: PackedSamples): void {
    for (const s of samples) {
      const pack = this.adoptPack(this.samples.length, s.message_log);
      this.samples.push({
        sample: s.sample,
        idx: s.idx,
        task: s.task_name,
        state: "waiting",
        messages: s.message_log.map((m) => compactMessage(m, pack)),
        promptMessages: s.message_log.length,
        initialMetadata: s.extra_env_info,
        ...(s.stop_strings !== undefined ? { initialStopStrings: s.stop_strings } : {}),
        turns: [],
        totalReward: 0,
        termination: null,
        error: null,
      });
    }
  }

  /** The environments' metrics after the run (the worker's, or an export's footer); publish to show them. */
  setEnvironmentMetrics(reports: readonly EnvironmentMetrics[] | null): void {
    this.summary.environmentMetrics = reports?.length ? [...reports] : null;
    this.version += 1; // a change the next publish announces
  }

  /** Marks the run as a fork's, continuing the original's as `continuation` says (see RunSummary.forkContinuation). */
  setForkContinuation(continuation: ForkContinuation | null): void {
    this.summary.forkContinuation = continuation ? { ...continuation } : null;
    this.version += 1;
  }

  /** Applies one event of the run (as the core emits it, or packed as the rollout worker sends it). */
  apply(event: PackedEvent): void {
    this.version += 1;
    this.summary.lastT = Math.max(this.summary.lastT, event.t);
    switch (event.type) {
      case "rollout_start":
        this.summary.mode = event.mode;
        this.summary.maxRolloutTurns = event.maxRolloutTurns;
        this.summary.maxSeqLen = event.maxSeqLen;
        this.samples.length = 0;
        this.packs = [];
        this.streaming.clear();
        this.addSamples(event.samples);
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
        // Kept only once some token has a detail (a model policy's): a text policy's tokens cost nothing here.
        let streaming = this.streaming.get(t);
        if (!streaming && event.detail) this.streaming.set(t, (streaming = { from: t.streamedTokens - 1, ids: [], details: [] }));
        if (streaming) {
          streaming.ids.push(event.tokenId);
          streaming.details.push(event.detail);
        }
        return;
      }
      case "assistant_message": {
        const s = this.samples[event.sample]!;
        const t = s.turns[event.turn]!;
        s.messages.push(compactMessage(event.message, this.pack(event.sample)));
        t.assistantIndex = s.messages.length - 1;
        t.genEnd = event.t;
        t.responseTruncated = event.truncated;
        this.keepTokenDetails(t, tokenIdsView(event.message));
        // The message supersedes the streamed text (a string of one piece per token, kept for nothing otherwise).
        t.streamed = "";
        s.state = "environment";
        return;
      }
      case "env_step": {
        const s = this.samples[event.sample]!;
        const t = s.turns[event.turn]!;
        if (t.assistantIndex !== null && event.violations.length) {
          s.messages[t.assistantIndex] = withKeys(s.messages[t.assistantIndex]!, { invalid_action_violations: event.violations });
        }
        s.messages.push(compactMessage(event.observation, this.pack(event.sample)));
        t.observationIndex = s.messages.length - 1;
        t.envEnd = event.t;
        const { reward, rewardComponents, terminated, truncatedContext, violations, metadata, stopStrings } = event;
        Object.assign(t, { reward, rewardComponents, terminated, truncatedContext, violations, metadata });
        if (stopStrings !== undefined) t.stopStrings = stopStrings;
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
        if (open) this.streaming.delete(open);
        this.packs[event.sample]?.trim();
        return;
      }
      case "rollout_end":
        this.summary.status = "finished";
        this.summary.partial = event.partial;
        this.summary.metrics = event.metrics;
        this.finalBatch = withoutMessageLogs(event.batch);
        for (const pack of this.packs) pack?.trim();
        return;
      case "rollout_error":
        this.summary.status = "failed";
        this.summary.error = event.error;
        return;
    }
  }

  /**
   * The streamed details of a turn's assistant message: its tokens are the last ones streamed (a turn run again,
   * as after a lost WebGPU device, streamed its tokens twice), and each must be the token its detail came with.
   */
  private keepTokenDetails(t: TurnView, ids: ArrayLike<TokenId> | TokenIds): void {
    const streaming = this.streaming.get(t);
    if (!streaming) return;
    this.streaming.delete(t);
    const n = ids.length;
    const start = t.streamedTokens - n - streaming.from;
    const details: (TokenStepDetail | undefined)[] = [];
    for (let i = 0; i < n; i++) {
      const j = start + i;
      if (j >= 0 && j < streaming.ids.length && streaming.ids[j] !== ids[i]) {
        t.tokenDetailsMissing = "the tokens streamed in this turn are not the message's tokens";
        return;
      }
      details.push(j >= 0 ? streaming.details[j] : undefined);
    }
    const packed = packTokenDetails(details, this.detailTexts);
    if (packed) t.tokenDetails = packed;
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

function withoutMessageLogs(batch: Record<string, unknown[]>): Record<string, unknown[]> {
  if (!("message_log" in batch)) return batch;
  const { message_log: _logs, ...rest } = batch;
  return rest;
}

/**
 * The live event stream of a rollout: one discriminated union that the lab's UI and the regression runner are
 * built on. `sample` is the batch position; `t` is milliseconds since the rollout started (wall clock, never
 * compared in goldens).
 */

import type { Violation } from "../assessment/violations.js";
import type { Message, Metadata, TokenId, TokenStepDetail } from "../types.js";

/** Why a sample ended (decision 6), plus `cancelled` for samples cut short by an abort. */
export type TerminationReason =
  | "terminated"
  | "truncated_context"
  | "truncated_response"
  | "max_turns"
  | "error"
  | "cancelled";

export type RolloutMode = "sync" | "async";

export type RolloutEvent =
  | {
      type: "rollout_start";
      t: number;
      mode: RolloutMode;
      /**
       * Each sample's starting point: its prompt messages, environment state and (the lab's addition, absent in
       * runs recorded before it) its first turn's stop strings.
       */
      samples: {
        sample: number;
        idx: number;
        task_name: string;
        message_log: Message[];
        extra_env_info: Metadata;
        stop_strings?: string[] | null;
      }[];
      maxRolloutTurns: number;
      maxSeqLen: number;
    }
  | { type: "turn_start"; t: number; sample: number; turn: number; inputTokens: number }
  | {
      type: "token";
      t: number;
      sample: number;
      turn: number;
      tokenId: TokenId;
      text: string;
      /** The step's entropy and top alternatives, from a policy that records them (lab-only: never in a result). */
      detail?: TokenStepDetail;
    }
  | { type: "assistant_message"; t: number; sample: number; turn: number; message: Message; truncated: boolean }
  | {
      type: "env_step";
      t: number;
      sample: number;
      turn: number;
      observation: Message;
      reward: number;
      rewardComponents: Record<string, number> | null;
      terminated: boolean;
      truncatedContext: boolean;
      violations: Violation[];
      metadata: Metadata;
      /**
       * The stop strings the sample's next turn uses (after D5 for the path): with `metadata`, all a rollout needs
       * to go on from this turn (the lab's forks). Absent in runs recorded before it.
       */
      stopStrings?: string[] | null;
    }
  | {
      type: "sample_end";
      t: number;
      sample: number;
      idx: number;
      termination: TerminationReason;
      error: string | null;
      totalReward: number;
      turns: number;
    }
  | { type: "rollout_end"; t: number; batch: Record<string, unknown[]>; metrics: Record<string, unknown>; partial: boolean }
  | { type: "rollout_error"; t: number; error: string };

export type RolloutEventType = RolloutEvent["type"];

/**
 * The rollout worker client stood in for, for the session's tests: each run records what the session asked of it
 * (pause, resume, step, stop, answers), and the test plays its worker (events, a result, a failure).
 */

import type { RolloutEvent } from "../../core/index.js";
import type { RolloutResultJson } from "../../scenario/result.js";
import type { RunHandle, RunHandlers } from "../worker/client.js";
import type { ModelSettings, UserEnvironmentPort } from "../worker/protocol.js";
import type { RunClient, Selection, SelectionPort } from "./run-session.js";

export class FakeRun {
  readonly asked: string[] = [];
  readonly handle: RunHandle;
  private resolve!: (result: RolloutResultJson) => void;
  private reject!: (error: Error) => void;

  constructor(
    readonly scenario: unknown,
    readonly handlers: RunHandlers,
    readonly settings: ModelSettings,
    readonly environments: UserEnvironmentPort[],
  ) {
    const result = new Promise<RolloutResultJson>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    const ask = (what: string) => () => void this.asked.push(what);
    this.handle = {
      result,
      pause: ask("pause"),
      resume: ask("resume"),
      step: ask("step"),
      stop: ask("stop"),
      answer: (requestId, text) => void this.asked.push(`answer ${requestId}: ${text}`),
      environmentHost: (name, news) => void this.asked.push(`environment ${name}: ${news.outcome}`),
    };
  }

  emit(...events: RolloutEvent[]): void {
    for (const event of events) this.handlers.onEvent?.(event);
  }

  /** The rollout ends (a `rollout_end` event, then the result). */
  finish(result: RolloutResultJson = {} as RolloutResultJson): void {
    this.emit({ type: "rollout_end", t: 9, batch: {}, metrics: {}, partial: false });
    this.resolve(result);
  }

  fail(error: Error): void {
    this.reject(error);
  }
}

export class FakeRunClient implements RunClient {
  readonly runs: FakeRun[] = [];

  run(scenario: unknown, handlers: RunHandlers, settings: ModelSettings, environments: UserEnvironmentPort[]): RunHandle {
    const run = new FakeRun(scenario, handlers, settings, environments);
    this.runs.push(run);
    return run.handle;
  }

  get last(): FakeRun {
    const run = this.runs.at(-1);
    if (!run) throw new Error("no run was started");
    return run;
  }
}

/** A selection kept in a plain object (the page keeps it in its store). */
export function plainSelection(): SelectionPort & { current: Selection } {
  const port = {
    current: { selected: 0, selectedTurn: null } as Selection,
    get: () => port.current,
    set: (selection: Selection) => void (port.current = selection),
  };
  return port;
}

/** A turn of the event loop (the session starts a run's worker once the user environments have settled). */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

/** A rollout's start with `samples` samples of one prompt message each. */
export function rolloutStart(samples: number): RolloutEvent {
  return {
    type: "rollout_start",
    t: 0,
    mode: "sync",
    maxRolloutTurns: 3,
    maxSeqLen: 64,
    samples: Array.from({ length: samples }, (_, i) => ({ sample: i, idx: i, task_name: "t", message_log: [{ role: "user", content: `q${i}`, token_ids: [1] }], extra_env_info: null })),
  };
}

export function sampleEnd(sample: number, termination: "terminated" | "cancelled" = "terminated", totalReward = 1): RolloutEvent {
  return { type: "sample_end", t: 1, sample, idx: sample, termination, error: termination === "cancelled" ? "stopped" : null, totalReward, turns: 0 };
}

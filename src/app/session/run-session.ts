/**
 * The page's run session: the one owner of a run's lifecycle in the page, and of what the page shows. It holds the
 * worker client, starts runs (the set-up's, a fork's: a fork is a run started with a fork plan), controls them
 * (pause, step, resume, stop, a human's answers), decides what is shown (a live run, a saved, imported or recovered
 * run, a fork, a preview of a big file) and says what happens to runs (`on`: started, turn, status, ended, failed,
 * shown). Saving and checkpointing (../run/recovery.ts) and the forks list subscribe to those events.
 *
 * React-free: views read `state` through `subscribe` (`useShown`, ./use-session.ts); a run's model publishes its
 * own changes (`RunModel.subscribe`), at most once per frame while it is live (the session's render budget).
 */

import type { RolloutResultJson } from "../../scenario/result.js";
import type { Scenario } from "../../scenario/schema.js";
import { endUnfinished } from "../run/interrupted.js";
import { isFork } from "../run/kept-as.js";
import type { PackedEvent } from "../run/compact-messages.js";
import type { PreviewProgress, PreviewTarget } from "../run/preview-import.js";
import { renderBudget, type RenderBudgetOptions } from "../run/render-budget.js";
import { RunModel } from "../run/run-model.js";
import type { RunHandle, RunHandlers } from "../worker/client.js";
import type { HostNews, RunEnvironments } from "../envs/user-environments.js";
import type { HumanRequest, ModelSettings, ModelStatus, UserEnvironmentPort } from "../worker/protocol.js";

export type RunStatus = "idle" | "running" | "paused" | "finished" | "failed";
export const isLive = (status: RunStatus): boolean => status === "running" || status === "paused";

/** What the page shows: a run it started (`run`, `fork`), one it opened, or a big file's preview (no run yet). */
export type ShownKind = "none" | "run" | "fork" | "saved" | "imported" | "recovered" | "preview";

/** A big file shown while it is read (../run/preview-import.ts): what the page's banner says about it. */
export interface PreviewInfo extends Pick<PreviewProgress, "phase" | "badLines"> {
  name: string;
  /** Stops reading: the preview goes, the run set aside comes back. */
  stop(): void;
}

export interface Shown {
  kind: ShownKind;
  model: RunModel | null;
  /** The scenario the run was started with (null: none known, an imported run without one). */
  scenario: Scenario | null;
  status: RunStatus;
  error: string | null;
  result: RolloutResultJson | null;
  modelStatus: ModelStatus | null;
  /** Human turns waiting for a reply (a human run's). */
  humanRequests: readonly HumanRequest[];
  /** Set while a big file's samples are shown as they are read: no run yet (not saved, forked or compared as one). */
  preview: PreviewInfo | null;
}

/** Where in the shown run the page looks. The session sets it when it shows another run. */
export interface Selection {
  selected: number;
  selectedTurn: number | null;
}

/** Where the selection lives (the page's store); the session reads it to set it aside, and writes it on a show. */
export interface SelectionPort {
  get(): Selection;
  set(selection: Selection): void;
}

export type SessionEvent =
  | { type: "started"; model: RunModel; scenario: Scenario; kind: "run" | "fork" }
  /** A turn of a live run ended (its environment answered). */
  | { type: "turn"; model: RunModel; sample: number; turn: number }
  | { type: "status"; model: RunModel; status: RunStatus }
  /** A run's rollout ended (finished, or stopped: its partial result). `scenario`: what replays it. */
  | { type: "ended"; model: RunModel; scenario: Scenario; result: RolloutResultJson }
  /** A run failed: what finished stays, the samples under way ended with the reason (`model`). */
  | { type: "failed"; model: RunModel; scenario: Scenario; error: string }
  /** The page shows another run; `started`: one it just started (from the set-up's scenario, or a fork's). */
  | { type: "shown"; shown: Shown; started: boolean };

/** What the session needs of the worker client (../worker/client.ts). */
export interface RunClient {
  run(scenario: unknown, handlers: RunHandlers, settings: ModelSettings, environments: UserEnvironmentPort[]): RunHandle;
}

/** What the session needs of the user environments (../envs/user-environments.ts). */
export interface EnvironmentSource {
  /** Settles once the environments that load at start have loaded (a shared link's run waits for them). */
  settled(): Promise<void>;
  /** A run's hold on the hosts of the environments `names`: their ports, and what the run hears of each host. */
  connect(names: string[], news: (name: string) => HostNews): RunEnvironments;
}

export interface StartOptions {
  settings?: ModelSettings;
  /**
   * A fork's run: its model (the original's kept turns, ../fork/fork-model.ts), how the fork's events go into it,
   * and where the page looks first.
   */
  fork?: { model: RunModel; apply(event: PackedEvent): void; select: Selection };
}

export interface SessionOptions {
  selection: SelectionPort;
  environments?: EnvironmentSource;
  /** A live run's drawing budget (default ../run/render-budget.ts); tests set their own frame. */
  budget?: RenderBudgetOptions;
  /** Says that a live run was stopped because something replaced it (../run/kept.ts `notify`). */
  notifyReplaced?: (text: string) => void;
  /** Tells a stop the worker did not act on in time (it ends `cancelled`, as a Stop's samples do). */
  isStopTimeout?: (error: Error) => boolean;
}

/** A run this session started and that has not ended. */
interface LiveRun {
  model: RunModel;
  apply(event: PackedEvent): void;
  kind: "run" | "fork";
  scenario: Scenario;
  handle: RunHandle | null;
  status: RunStatus;
  /** What the person typed in a human run, per sample and turn: the run's scripted responses. */
  humanTyped: string[][] | null;
  /** Stopped before its worker run could start. */
  cancelled: boolean;
}

const NOTHING: Shown = { kind: "none", model: null, scenario: null, status: "idle", error: null, result: null, modelStatus: null, humanRequests: [], preview: null };

/** What a preview set aside (the page's run as it was), and how to end the preview when the page replaces it. */
interface PreviewAside {
  model: RunModel;
  aside: Shown;
  selection: Selection;
  bump: () => void;
  replaced: () => void;
}

export class RunSession {
  private shown: Shown = NOTHING;
  private readonly live = new Map<RunModel, LiveRun>();
  private readonly stateListeners = new Set<() => void>();
  private readonly eventListeners = new Set<(event: SessionEvent) => void>();
  /**
   * The newest way of replacing what the page shows wins. An import, or a saved or recovered run being opened, takes
   * its time (reading and checking the file, building the run model in slices): it takes a claim first (`claim`),
   * and shows its run with it (`show(…, claim)`). Any later claim, a run started, or another run shown without a
   * claim supersedes it: its signal aborts (its reading and building stop), and its `show` shows nothing.
   */
  private claimed: AbortController | null = null;
  private previewing: PreviewAside | null = null;
  /** Set by the test hook only (`?faults=1`, ../faults-debug.ts). */
  readonly testHooks = { startPaused: false, holdableGeneration: false };

  constructor(
    private readonly client: RunClient,
    private readonly options: SessionOptions,
  ) {}

  get state(): Shown {
    return this.shown;
  }

  /** For `useSyncExternalStore`: called whenever `state` is replaced. */
  readonly subscribe = (listener: () => void): (() => void) => {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  };

  /** The lifecycle events of every run this session starts or shows. */
  on(listener: (event: SessionEvent) => void): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  /** Whether a run of this session is under way (shown or not). */
  get anyLive(): boolean {
    return this.live.size > 0;
  }

  /** Supersedes any import or open under way; the signal aborts when something newer supersedes this one. */
  claim(): AbortSignal {
    this.supersede();
    this.claimed = new AbortController();
    return this.claimed.signal;
  }

  /** Starts `scenario` and shows it (a fork's: `options.fork`); any run under way is stopped and kept. */
  start(scenario: Scenario, options: StartOptions = {}): RunModel {
    const kind = options.fork ? "fork" : "run";
    this.supersede();
    this.stopLive(kind === "fork" ? "a fork started" : "a new run started");
    this.dropPreview();
    const model = options.fork?.model ?? new RunModel();
    const human = options.settings?.human === true;
    const apply = options.fork?.apply ?? ((event: PackedEvent) => model.apply(event));
    const run: LiveRun = { model, apply, kind, scenario, handle: null, status: "running", humanTyped: human ? [] : null, cancelled: false };
    this.live.set(model, run);
    this.setShown({ ...NOTHING, kind, model, scenario, status: "running" }, options.fork?.select ?? { selected: 0, selectedTurn: null }, true);
    this.emit({ type: "started", model, scenario, kind });
    // A user environment the scenario names may still be loading in its Worker (a shared link runs at once).
    const settled = this.options.environments?.settled() ?? Promise.resolve();
    void settled.then(() => {
      if (run.cancelled) return this.finishCancelled(run);
      this.launch(run, options.settings ?? {});
    });
    return model;
  }

  private launch(run: LiveRun, settings: ModelSettings): void {
    const { model, scenario } = run;
    const bump = renderBudget(() => model.publish(), this.options.budget);
    const names = Object.values(scenario.envs).map((e) => e.env);
    // What becomes of a host the run's step left stuck goes to the run's worker (its handle exists by then).
    const hold = this.options.environments?.connect(names, (name) => ({
      answering: () => run.handle?.environmentHost(name, { outcome: "answering" }),
      replaced: (port, why) => run.handle?.environmentHost(name, { outcome: "replaced", port, why }),
      gone: (why) => run.handle?.environmentHost(name, { outcome: "gone", why }),
    }));
    const ports = hold?.ports ?? [];
    const hooks = this.testHooks;
    let handle: RunHandle;
    try {
      handle = this.client.run(
        scenario,
        {
          onModel: (modelStatus) => this.updateShown(model, { modelStatus }),
          onHumanRequest: (request) => this.updateShown(model, (s) => ({ humanRequests: [...s.humanRequests, request] })),
          onEnvironmentMetrics: (reports) => {
            model.setEnvironmentMetrics(reports);
            bump();
          },
          onEnvironmentOverdue: (name) => hold?.overdue(name),
          onEvent: (event) => {
            run.apply(event);
            bump();
            if (event.type === "env_step") this.emit({ type: "turn", model, sample: event.sample, turn: event.turn });
          },
        },
        {
          ...settings,
          ...(hooks.startPaused ? { startPaused: true } : {}),
          ...(hooks.holdableGeneration ? { holdableGeneration: true } : {}),
        },
        ports,
      );
    } catch (e) {
      hold?.release();
      // Whatever the run cannot even be handed to its worker for (a scenario that cannot be copied) is its error.
      this.fail(run, `the run could not start: ${(e as Error).message}`, "error");
      return;
    }
    run.handle = handle;
    void handle.result.then(
      () => hold?.release(),
      () => hold?.release(),
    );
    // The test hook's: the worker starts it paused before its first turn (a test steps it).
    if (hooks.startPaused) this.setStatus(run, "paused");
    handle.result.then(
      (result) => {
        // A human run becomes a scripted scenario: export and share links replay what was typed.
        const final = run.humanTyped
          ? ({ ...scenario, policy: { kind: "scripted", responses: model.samples.map((_, i) => run.humanTyped![i] ?? []) } } as Scenario)
          : scenario;
        this.live.delete(model);
        model.publish();
        run.status = "finished";
        this.updateShown(model, { status: "finished", result, scenario: final, humanRequests: [] });
        this.emit({ type: "status", model, status: "finished" });
        this.emit({ type: "ended", model, scenario: final, result });
      },
      (e: Error) => {
        // What finished stays; the samples under way end with the reason (a crashed worker, a lost device); after a
        // Stop the worker did not act on in time (it was terminated) they end `cancelled`, as a Stop's do.
        this.fail(run, e.message, this.options.isStopTimeout?.(e) ? "cancelled" : "error");
      },
    );
  }

  private fail(run: LiveRun, error: string, termination: "error" | "cancelled"): void {
    const { model } = run;
    endUnfinished(model, error, termination);
    model.publish();
    this.live.delete(model);
    run.status = "failed";
    this.updateShown(model, { status: "failed", error, humanRequests: [] });
    this.emit({ type: "status", model, status: "failed" });
    this.emit({ type: "failed", model, scenario: run.scenario, error });
  }

  /** A run stopped before its worker run started: it ends with nothing (no sample ran). */
  private finishCancelled(run: LiveRun): void {
    this.fail(run, "the run was stopped before it started", "cancelled");
  }

  /** The live run shown (what the run controls act on). */
  private shownLive(): LiveRun | undefined {
    return this.shown.model ? this.live.get(this.shown.model) : undefined;
  }

  pause(): void {
    const run = this.shownLive();
    if (!run || run.status !== "running" || !run.handle) return;
    run.handle.pause();
    this.setStatus(run, "paused");
  }

  resume(): void {
    const run = this.shownLive();
    if (!run || run.status !== "paused" || !run.handle) return;
    run.handle.resume();
    this.setStatus(run, "running");
  }

  step(): void {
    const run = this.shownLive();
    if (run?.status === "paused") run.handle?.step();
  }

  /** Stops the run shown: its finished samples and its partial result are kept. */
  stop(): void {
    const run = this.shownLive();
    if (run) this.stopRun(run);
  }

  private stopRun(run: LiveRun): void {
    if (!run.handle) {
      run.cancelled = true;
      return;
    }
    run.handle.stop();
    if (run.status === "paused") run.handle.resume();
  }

  answerHuman(requestId: number, text: string): void {
    const run = this.shownLive();
    const request = this.shown.humanRequests.find((r) => r.requestId === requestId);
    if (!run?.handle || !request) return;
    run.handle.answer(requestId, text);
    if (run.humanTyped) (run.humanTyped[request.sample] ??= [])[request.turn] = text;
    this.updateShown(run.model, (s) => ({ humanRequests: s.humanRequests.filter((r) => r.requestId !== requestId) }));
  }

  /**
   * Shows a run that was saved, imported, recovered or forked, without running anything. With `claim` (what `claim()`
   * gave the import or open that built it): only if nothing newer superseded it (false then, and nothing changes).
   * `keepLive`: a run of the same fork tree is shown (the fork under way goes on, and is shown again as it is).
   */
  show(
    target: { model: RunModel; scenario: Scenario | null; kind: Exclude<ShownKind, "none" | "preview">; status?: RunStatus; result?: RolloutResultJson | null; error?: string | null; select?: Selection },
    options: { claim?: AbortSignal; keepLive?: boolean } = {},
  ): boolean {
    const { claim } = options;
    if (claim?.aborted) return false;
    if (claim && this.claimed?.signal === claim) this.claimed = null;
    else this.supersede();
    if (!options.keepLive) this.stopLive("the page shows the run opened instead");
    const { model } = target;
    const live = this.live.get(model);
    const shown: Shown = {
      ...NOTHING,
      kind: target.kind,
      model,
      scenario: target.scenario,
      // A run that failed (saved, imported or recovered as such) is shown failed, with why.
      status: live?.status ?? target.status ?? (model.summary.status === "failed" ? "failed" : "finished"),
      result: target.result ?? null,
      error: target.error ?? (model.summary.status === "failed" ? model.summary.error : null),
    };
    model.publish();
    if (this.previewing?.model === model) {
      // The preview imported: the same model becomes the current run, drawn as it is (the selection stays).
      this.previewing = null;
      const { selected, selectedTurn } = this.options.selection.get();
      this.setShown(shown, { selected: Math.min(selected, Math.max(0, model.samples.length - 1)), selectedTurn });
      return true;
    }
    this.dropPreview();
    this.setShown(shown, target.select ?? { selected: 0, selectedTurn: null });
    return true;
  }

  /** A run that cannot start (its scenario does not parse): the page says why; what is shown stays. */
  refuse(error: string): void {
    if (isLive(this.shown.status)) return;
    this.replaceShown({ ...this.shown, status: "failed", error, result: null });
  }

  /** Shows nothing (the views' Close this run): the run stays where it is kept. */
  close(): void {
    if (isLive(this.shown.status)) return;
    this.supersede();
    this.dropPreview();
    this.setShown(NOTHING, { selected: 0, selectedTurn: null });
  }

  /**
   * The page's side of a preview (../run/preview-import.ts) of file `name`: `begin` shows the preview's model, with
   * the run shown set aside (refused while a run is live: it would have to stop), `discard` puts that run back as it
   * was, and the import of the previewed model (`show` of that model) makes it the current run. `controls.stop` is
   * the banner's Stop; `controls.replaced` is called when the page shows another run instead (the preview then ends).
   */
  preview(name: string, controls: { stop(): void; replaced(): void }, progress: (p: PreviewProgress) => void = () => {}): PreviewTarget {
    let model: RunModel | null = null;
    const mine = () => this.previewing !== null && this.previewing.model === model;
    return {
      begin: (m) => {
        if (this.previewing || this.anyLive) return false;
        model = m;
        this.previewing = {
          model: m,
          aside: this.shown,
          selection: this.options.selection.get(),
          // Drawn less often than a live run (a tenth of the main thread, at least twice a second): the main thread
          // also takes in the file's samples, and the sooner it has them all, the sooner the file is imported.
          bump: renderBudget(() => mine() && m.publish(), { ...this.options.budget, share: 0.1, maxWaitMs: 500 }),
          replaced: controls.replaced,
        };
        m.publish();
        this.setShown({ ...NOTHING, kind: "preview", model: m, preview: { name, phase: "reading", badLines: 0, stop: controls.stop } }, { selected: 0, selectedTurn: null });
        progress({ phase: "reading", badLines: 0, linesRead: 0, bytesRead: 0, totalBytes: null });
        return true;
      },
      changed: () => {
        if (mine()) this.previewing!.bump();
      },
      progress: (p) => {
        const info = this.shown.preview;
        if (!mine() || !info) return;
        progress(p);
        if (info.phase !== p.phase || info.badLines !== p.badLines) this.replaceShown({ ...this.shown, preview: { ...info, phase: p.phase, badLines: p.badLines } });
      },
      discard: () => {
        if (!mine()) return;
        const { aside, selection } = this.previewing!;
        this.previewing = null;
        this.setShown(aside, selection);
      },
    };
  }

  private supersede(): void {
    const was = this.claimed;
    this.claimed = null;
    was?.abort(new DOMException("superseded by a newer run, import or opened run", "AbortError"));
  }

  /** Another run replaces the preview (a run, a saved or recovered run shown): the reading stops, nothing comes back. */
  private dropPreview(): void {
    const was = this.previewing;
    if (!was) return;
    this.previewing = null;
    was.replaced();
  }

  /**
   * A live run something else replaces (a run started, an import, a saved or recovered run opened, a link's run) is
   * stopped as Stop stops it, and kept as Stop keeps it (../run/recovery.ts saves it once it has ended). The page says
   * so. Nothing replaces a live run silently.
   */
  private stopLive(instead: string): void {
    for (const run of [...this.live.values()]) {
      const started = run.handle !== null;
      this.stopRun(run);
      // One that had not reached its worker yet ran nothing: there is nothing of it to keep.
      if (started)
        this.options.notifyReplaced?.(
        isFork(run.model)
          ? `The fork under way was stopped (as Stop stops it) and stays with its run's forks: ${instead}.`
          : `The run under way was stopped (as Stop stops it) and is kept among the saved runs: ${instead}.`,
      );
    }
  }

  private setStatus(run: LiveRun, status: RunStatus): void {
    run.status = status;
    this.updateShown(run.model, { status });
    this.emit({ type: "status", model: run.model, status });
  }

  /** Changes what is shown of `model`, if it is shown. */
  private updateShown(model: RunModel, changes: Partial<Shown> | ((s: Shown) => Partial<Shown>)): void {
    if (this.shown.model !== model) return;
    this.replaceShown({ ...this.shown, ...(typeof changes === "function" ? changes(this.shown) : changes) });
  }

  private setShown(shown: Shown, selection: Selection, started = false): void {
    this.options.selection.set(selection);
    this.replaceShown(shown);
    this.emit({ type: "shown", shown, started });
  }

  private replaceShown(shown: Shown): void {
    this.shown = shown;
    for (const listener of [...this.stateListeners]) listener();
  }

  private emit(event: SessionEvent): void {
    for (const listener of [...this.eventListeners]) listener(event);
  }
}

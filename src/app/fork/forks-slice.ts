/**
 * The forks of a run: each a branch of the run it was forked from (the original, or another fork), kept in the
 * page's memory while that original is the lab's run (a new run starts a new tree; forks are not saved in the
 * browser on their own, but an export while a fork is shown writes it).
 *
 * A fork is a run the page's session starts with a fork plan (../session/run-session.ts): it runs through the lab's
 * own worker, becomes the run the controls act on (pause, step, stop), and is shown as any run is (its model is the
 * original's kept turns followed by the fork's, fork-model.ts). Switching between the original and its forks swaps
 * what the session shows (a fork under way goes on); the original's state (scenario, result, status) is kept aside
 * while a fork is shown. Each fork's state follows the session's events.
 *
 * A slice of the page's store (../state/lab-state.ts).
 */

import type { RolloutResultJson } from "../../scenario/result.js";
import type { Scenario } from "../../scenario/schema.js";
import type { CompareFile, CompareSide } from "../compare/compare-slice.js";
import { setKeptAs } from "../run/kept-as.js";
import type { RunModel } from "../run/run-model.js";
import { isLive, type RunSession, type RunStatus, type ShownKind } from "../session/run-session.js";
import type { SliceSet } from "../state/slice.js";
import type { ModelSettings } from "../worker/protocol.js";
import { forkedRunModel } from "./fork-model.js";
import { ForkError, planFork, type ForkPlan, type ForkRequest } from "./fork-scenario.js";

/** What the lab showed for the original run, set aside while a fork is shown. */
interface RootRun {
  model: RunModel;
  kind: Exclude<ShownKind, "none" | "preview">;
  scenario: Scenario | null;
  result: RolloutResultJson | null;
  status: RunStatus;
  error: string | null;
}

export interface ForkRecord {
  id: string;
  root: RootRun;
  /** The fork it was forked from, or null for the original. */
  parentId: string | null;
  parentModel: RunModel;
  /** The forked sample's position in the run it was forked from. */
  sample: number;
  /** "sample 2 @ turn 3: edited assistant text" (prefixed with the parent fork for a fork of a fork). */
  label: string;
  plan: ForkPlan;
  model: RunModel;
  /** The batch position the policy's seeded draws use for this fork's sample (the original's). */
  policySample: number;
  status: RunStatus;
  error: string | null;
  result: RolloutResultJson | null;
}

export interface ForkEditorTarget {
  model: RunModel;
  sample: number;
  turn: number;
}

export type TurnNote = { kind: "kept" | "fork-point" | "branch"; text: string };

export interface ForksSlice {
  forks: ForkRecord[];
  editor: ForkEditorTarget | null;
  message: string | null;
  openEditor(turn: number): void;
  closeEditor(): void;
  /** Plans and starts a fork of the editor's sample and turn; false (with `message`) when it cannot. */
  runFork(request: Omit<ForkRequest, "turn">): boolean;
  /** Shows a fork, or the original with null. */
  show(id: string | null): void;
  /** Opens the comparison of a fork with the run it was forked from. */
  compare(id: string): void;
}

export interface ForksDeps {
  session: RunSession;
  /** The sample the lab looks at in the run shown. */
  selected(): number;
  /** What a run of the lab's set-up may use (the hub, a local folder, files). */
  settings(): ModelSettings;
  /** Puts `files` among the comparison's sources, compares `a` with `b`, and opens the comparison. */
  openComparison(files: (existing: CompareFile[]) => CompareFile[], a: CompareSide, b: CompareSide): void;
}

let counter = 0;

export const forkOfModel = (forks: readonly ForkRecord[], model: RunModel | null): ForkRecord | undefined =>
  model ? forks.find((f) => f.model === model) : undefined;

/** The original run of the tree `model` belongs to (itself when it is not a fork). */
export const rootOfModel = (forks: readonly ForkRecord[], model: RunModel | null): RunModel | null => forkOfModel(forks, model)?.root.model ?? model;

/** The forks of the tree `model` belongs to, in the order they were made. */
export const forksOfTree = (forks: readonly ForkRecord[], model: RunModel | null): ForkRecord[] => {
  const root = rootOfModel(forks, model);
  return root ? forks.filter((f) => f.root.model === root) : [];
};

/** Notes for a sample's transcript turns: kept turns and the fork point of a fork; where forks branch off. */
export function turnNotesFor(forks: readonly ForkRecord[], model: RunModel | null, sample: number): Map<number, TurnNote[]> {
  const notes = new Map<number, TurnNote[]>();
  const add = (turn: number, note: TurnNote) => notes.set(turn, [...(notes.get(turn) ?? []), note]);
  const fork = forkOfModel(forks, model);
  if (fork && sample === 0) {
    const from = fork.parentId ? `fork ${fork.parentId}` : "the original";
    for (let t = 0; t < fork.plan.keptTurns; t++) if (t !== fork.plan.turn) add(t, { kind: "kept", text: `kept from ${from}` });
    add(fork.plan.turn, { kind: "fork-point", text: `fork ${fork.id}: ${fork.plan.what}` });
  }
  for (const f of forks) {
    if (f.parentModel === model && f.sample === sample) add(f.plan.turn, { kind: "branch", text: `fork ${f.id} branches here: ${f.plan.what}` });
  }
  return notes;
}

export function createForksSlice(set: SliceSet<ForksSlice>, get: () => ForksSlice, deps: ForksDeps): ForksSlice {
  const { session } = deps;
  const update = (model: RunModel, changes: Partial<ForkRecord>) => {
    if (!get().forks.some((f) => f.model === model)) return;
    set((s) => ({ forks: s.forks.map((f) => (f.model === model ? { ...f, ...changes } : f)) }));
  };
  const byId = (id: string) => get().forks.find((f) => f.id === id);

  // Each fork's state follows its run's.
  session.on((event) => {
    if (event.type === "status") update(event.model, { status: event.status });
    else if (event.type === "ended") update(event.model, { status: "finished", result: event.result, error: null });
    else if (event.type === "failed") update(event.model, { status: "failed", result: null, error: event.error });
  });

  return {
    forks: [],
    editor: null,
    message: null,

    openEditor(turn) {
      const { model } = session.state;
      if (!model) return;
      set({ editor: { model, sample: deps.selected(), turn }, message: null });
    },
    closeEditor: () => set({ editor: null, message: null }),

    runFork(request) {
      const shown = session.state;
      const target = get().editor;
      const model = shown.model;
      if (!target || !model || target.model !== model) return false;
      if (isLive(shown.status)) {
        set({ message: "wait for the run to end (or stop it) before forking" });
        return false;
      }
      const running = get().forks.find((f) => isLive(f.status));
      if (running) {
        set({ message: `fork ${running.id} is still running: wait for it to end (or show it and stop it) before forking again` });
        return false;
      }
      const scenario = shown.scenario;
      const sample = model.samples[target.sample];
      if (!scenario || !sample || shown.kind === "none" || shown.kind === "preview") {
        set({ message: "this run has no scenario to fork (an imported run without one)" });
        return false;
      }
      const forks = get().forks;
      const parent = forkOfModel(forks, model);
      // A fork of a fork continues the original's row: its parent's here, or (an exported fork opened again) the one
      // its run kept.
      const policySample = parent ? parent.policySample : (model.summary.forkContinuation?.sampleId ?? target.sample);
      let plan: ForkPlan;
      try {
        plan = planFork(
          {
            scenario,
            sample,
            maxRolloutTurns: model.summary.maxRolloutTurns,
            policySample,
            finalStopStrings: (model.finalBatch?.stop_strings?.[target.sample] as string[] | null | undefined) ?? null,
          },
          { ...request, turn: target.turn },
        );
      } catch (e) {
        set({ message: e instanceof ForkError ? e.message : `cannot fork: ${(e as Error).message}` });
        return false;
      }

      const root: RootRun = parent
        ? parent.root
        : { model, kind: shown.kind, scenario, result: shown.result, status: shown.status, error: shown.error };
      const forked = forkedRunModel({ sample, summary: model.summary }, plan);
      forked.model.setForkContinuation(plan.continuation);
      // Kept with its original's forks, not saved in the browser as a run of its own (../run/recovery.ts).
      setKeptAs(forked.model, { state: "fork" });
      const id = String(++counter);
      const record: ForkRecord = {
        id,
        root,
        parentId: parent?.id ?? null,
        parentModel: model,
        sample: target.sample,
        label: `${parent ? `fork ${parent.id} → ` : ""}sample ${sample.sample} @ turn ${target.turn}: ${plan.what}`,
        plan,
        model: forked.model,
        policySample,
        status: "running",
        error: null,
        result: null,
      };
      // Forks of another tree (an earlier run) are dropped: the list belongs to the run shown.
      set({ forks: [...forks.filter((f) => f.root.model === root.model), record], editor: null, message: null });
      session.start(plan.scenario, {
        settings: { ...deps.settings(), fork: plan.continuation },
        fork: { model: forked.model, apply: forked.apply, select: { selected: 0, selectedTurn: plan.turn } },
      });
      return true;
    },

    show(id) {
      const forks = get().forks;
      const shown = forkOfModel(forks, session.state.model);
      set({ editor: null, message: null });
      if (id === null) {
        if (!shown) return;
        const { root } = shown;
        // The original's sample this branch of forks grew from.
        let first: ForkRecord = shown;
        for (let up = byId(first.parentId ?? ""); up; up = byId(up.parentId ?? "")) first = up;
        session.show({ ...root, select: { selected: first.sample, selectedTurn: null } }, { keepLive: true });
        return;
      }
      const fork = byId(id);
      if (!fork) return;
      session.show(
        { model: fork.model, kind: "fork", scenario: fork.plan.scenario, result: fork.result, status: fork.status, error: fork.error, select: { selected: 0, selectedTurn: fork.plan.turn } },
        { keepLive: true },
      );
    },

    compare(id) {
      const fork = byId(id);
      if (!fork) return;
      const tree = new Set<RunModel>([fork.root.model, ...get().forks.filter((f) => f.root === fork.root).map((f) => f.model)]);
      const parentKey = fork.parentId ? `fork-${fork.parentId}` : "fork-original";
      deps.openComparison(
        (existing) => {
          // Fork sources of other trees are dropped; the user's own files stay.
          const files = existing.filter((f) => !f.id.startsWith("fork") || tree.has(f.model));
          const ensure = (fileId: string, model: RunModel, label: string) => {
            if (!files.some((f) => f.id === fileId)) files.push({ id: fileId, name: label, label, model });
          };
          ensure(parentKey, fork.parentModel, fork.parentId ? `Fork ${fork.parentId}: ${byId(fork.parentId)?.label ?? ""}` : "The original run");
          ensure(`fork-${fork.id}`, fork.model, `Fork ${fork.id}: ${fork.label}`);
          return files;
        },
        { source: `file:${parentKey}`, sample: fork.sample },
        { source: `file:fork-${fork.id}`, sample: 0 },
      );
    },
  };
}

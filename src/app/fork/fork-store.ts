/**
 * The forks of a run: each a branch of the run it was forked from (the original, or another fork), kept in the
 * page's memory while that original is the lab's run (a new run starts a new tree; forks are not saved in the
 * browser on their own, but an export while a fork is shown writes it).
 *
 * A fork runs through the lab's own worker and becomes the run the controls act on (pause, step, stop); the lab
 * shows it as it shows any run (its model is the original's kept turns followed by the fork's, fork-model.ts).
 * Switching between the original and its forks swaps what the lab shows; the original's state (scenario, result,
 * status) is kept aside while a fork is shown.
 */

import { create } from "zustand";
import type { RolloutResultJson } from "../../scenario/result.js";
import type { Scenario } from "../../scenario/schema.js";
import { useCompare } from "../compare/compare-store.js";
import { environmentPortsFor } from "../envs/user-environments.js";
import type { RunModel } from "../run/run-model.js";
import { labRuns, useLab, type RunStatus } from "../store.js";
import { forkedRunModel } from "./fork-model.js";
import { ForkError, planFork, type ForkPlan, type ForkRequest } from "./fork-scenario.js";

/** What the lab showed for the original run, set aside while a fork is shown. */
interface RootRun {
  model: RunModel;
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

interface ForkState {
  forks: ForkRecord[];
  editor: ForkEditorTarget | null;
  message: string | null;
  /** A tab the page should switch to (the comparison), with a counter so the same request twice is seen twice. */
  tabRequest: { tab: "compare"; n: number } | null;
  openEditor(turn: number): void;
  closeEditor(): void;
  /** Plans and starts a fork of the editor's sample and turn; false (with `message`) when it cannot. */
  runFork(request: Omit<ForkRequest, "turn">): boolean;
  /** Shows a fork, or the original with null. */
  show(id: string | null): void;
  /** Opens the comparison of a fork with the run it was forked from. */
  compare(id: string): void;
}

let counter = 0;
let tabCounter = 0;

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

/** Coalesces model changes into one store update per frame (as the lab does for its own runs). */
function frameScheduler(flush: () => void): () => void {
  let pending = false;
  const schedule = typeof requestAnimationFrame === "function" ? requestAnimationFrame : (f: () => void) => setTimeout(f, 16);
  return () => {
    if (pending) return;
    pending = true;
    schedule(() => {
      pending = false;
      flush();
    });
  };
}

export const useForks = create<ForkState>((set, get) => {
  const update = (id: string, changes: Partial<ForkRecord>) =>
    set({ forks: get().forks.map((f) => (f.id === id ? { ...f, ...changes } : f)) });
  const byId = (id: string) => get().forks.find((f) => f.id === id);

  /** Keeps the state of the fork the lab shows (a pause, a stop) before the lab shows something else. */
  const rememberShown = () => {
    const lab = useLab.getState();
    const shown = forkOfModel(get().forks, lab.model);
    if (shown) update(shown.id, { status: lab.status, error: lab.error });
  };

  return {
    forks: [],
    editor: null,
    message: null,
    tabRequest: null,

    openEditor(turn) {
      const { model, selected } = useLab.getState();
      if (!model) return;
      set({ editor: { model, sample: selected, turn }, message: null });
    },
    closeEditor: () => set({ editor: null, message: null }),

    runFork(request) {
      const lab = useLab.getState();
      const target = get().editor;
      const model = lab.model;
      if (!target || !model || target.model !== model) return false;
      if (lab.status === "running" || lab.status === "paused") {
        set({ message: "wait for the run to end (or stop it) before forking" });
        return false;
      }
      const running = get().forks.find((f) => f.status === "running" || f.status === "paused");
      if (running) {
        set({ message: `fork ${running.id} is still running: wait for it to end (or show it and stop it) before forking again` });
        return false;
      }
      const scenario = lab.runScenario;
      const sample = model.samples[target.sample];
      if (!scenario || !sample) {
        set({ message: "this run has no scenario to fork (an imported run without one)" });
        return false;
      }
      const forks = get().forks;
      const parent = forkOfModel(forks, model);
      const policySample = parent ? parent.policySample : target.sample;
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

      rememberShown();
      const root: RootRun = parent
        ? parent.root
        : { model, scenario, result: lab.result, status: lab.status, error: lab.error };
      const forked = forkedRunModel({ sample, summary: model.summary }, plan);
      // Not saved in the browser as a run of its own (KeepAndShare saves finished runs that are not yet saved).
      (forked.model as { savedAs?: string }).savedAs = "fork";
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

      useLab.setState({
        model: forked.model,
        version: forked.model.version,
        runScenario: plan.scenario,
        result: null,
        status: "running",
        error: null,
        selected: 0,
        selectedTurn: plan.turn,
        modelStatus: null,
        humanRequests: [],
      });

      const bump = frameScheduler(() => {
        if (useLab.getState().model === forked.model) useLab.setState({ version: forked.model.version });
      });
      const { remoteHost, localFolder, files } = useLab.getState();
      const handle = labRuns.client.run(
        plan.scenario,
        {
          onModel: (modelStatus) => {
            if (useLab.getState().model === forked.model) useLab.setState({ modelStatus });
          },
          onEvent: (event) => {
            forked.apply(event);
            bump();
          },
        },
        {
          ...(remoteHost.trim() ? { remoteHost: remoteHost.trim().replace(/\/?$/, "/") } : {}),
          ...(localFolder ? { localFiles: localFolder.files } : {}),
          files,
          fork: plan.continuation,
        },
        environmentPortsFor(Object.values(plan.scenario.envs).map((e) => e.env)),
      );
      labRuns.adopt(handle);
      const finish = (status: RunStatus, result: RolloutResultJson | null, error: string | null) => {
        update(id, { status, result, error });
        if (useLab.getState().model === forked.model) useLab.setState({ status, result, error, version: forked.model.version });
      };
      handle.result.then(
        (result) => finish("finished", result, null),
        (e: Error) => finish("failed", null, e.message),
      );
      return true;
    },

    show(id) {
      const lab = useLab.getState();
      const forks = get().forks;
      const shown = forkOfModel(forks, lab.model);
      rememberShown();
      set({ editor: null, message: null });
      if (id === null) {
        if (!shown) return;
        const { root } = shown;
        // The original's sample this branch of forks grew from.
        let first: ForkRecord = shown;
        for (let up = byId(first.parentId ?? ""); up; up = byId(up.parentId ?? "")) first = up;
        const selected = first.sample;
        useLab.setState({ model: root.model, version: root.model.version, runScenario: root.scenario, result: root.result, status: root.status, error: root.error, selected, selectedTurn: null });
        return;
      }
      const fork = byId(id);
      if (!fork) return;
      useLab.setState({
        model: fork.model,
        version: fork.model.version,
        runScenario: fork.plan.scenario,
        result: fork.result,
        status: fork.status,
        error: fork.error,
        selected: 0,
        selectedTurn: fork.plan.turn,
      });
    },

    compare(id) {
      const fork = byId(id);
      if (!fork) return;
      const compare = useCompare.getState();
      const tree = new Set<RunModel>([fork.root.model, ...get().forks.filter((f) => f.root === fork.root).map((f) => f.model)]);
      // Fork sources of other trees are dropped; the user's own files stay.
      const files = compare.files.filter((f) => !f.id.startsWith("fork") || tree.has(f.model));
      const ensure = (fileId: string, model: RunModel, label: string) => {
        if (!files.some((f) => f.id === fileId)) files.push({ id: fileId, name: label, label, model });
      };
      const parentKey = fork.parentId ? `fork-${fork.parentId}` : "fork-original";
      ensure(parentKey, fork.parentModel, fork.parentId ? `Fork ${fork.parentId}: ${byId(fork.parentId)?.label ?? ""}` : "The original run");
      ensure(`fork-${fork.id}`, fork.model, `Fork ${fork.id}: ${fork.label}`);
      useCompare.setState({
        files,
        a: { source: `file:${parentKey}`, sample: fork.sample },
        b: { source: `file:fork-${fork.id}`, sample: 0 },
        auto: false,
        message: null,
      });
      set({ tabRequest: { tab: "compare", n: ++tabCounter } });
    },
  };
});

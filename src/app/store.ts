/**
 * The page's state, and where its parts are wired together. A run's lifecycle, and which run is shown, belong to the
 * run session (./session/run-session.ts: React-free); a run's live data to its `RunModel` (which publishes its own
 * changes). The store holds the rest, as slices of one zustand store (./state/lab-state.ts): the set-up, the
 * selection, the forks, the comparison, the open tab, the token texts, a previewed file's progress. Components read one
 * field per selector.
 */

import equal from "fast-deep-equal";
import { create, type StoreApi, type UseBoundStore } from "zustand";
import { parseScenario, parseScenarioText, type Scenario } from "../scenario/schema.js";
import { createCompareSlice } from "./compare/compare-slice.js";
import { connectRun, userEnvironmentsSettled } from "./envs/user-environments.js";
import { createForksSlice } from "./fork/forks-slice.js";
import { notify } from "./run/kept.js";
import type { PreviewTarget } from "./run/preview-import.js";
import type { RunModel } from "./run/run-model.js";
import { keepRunsOf } from "./run/recovery.js";
import { onSavedRunsChange } from "./run/saved-runs.js";
import { RunSession } from "./session/run-session.js";
import { setupProblems } from "./setup/setup.js";
import { createFormSlice, prettyScenario, type FormSlice } from "./state/form-slice.js";
import { createLayoutSlice } from "./state/layout-slice.js";
import type { LabState } from "./state/lab-state.js";
import { createSelectionSlice } from "./state/selection-slice.js";
import { sliceSetter } from "./state/slice.js";
import { createTokensSlice } from "./state/tokens-slice.js";
import { createViewSlice } from "./state/view-slice.js";
import { RolloutWorkerClient, StopTimeoutError } from "./worker/client.js";
import type { ModelSettings } from "./worker/protocol.js";


/** The page's one rollout worker client (a model loaded for a run is reused by the next, a fork's included). */
export const client = new RolloutWorkerClient();

export const session: RunSession = new RunSession(client, {
  selection: {
    get: () => useLab.getState().selection,
    set: ({ selected, selectedTurn }) => useLab.setState((s) => ({ selection: { ...s.selection, selected, selectedTurn } })),
  },
  environments: { settled: userEnvironmentsSettled, connect: connectRun },
  notifyReplaced: (text) => notify({ tone: "info", text }),
  isStopTimeout: (e) => e instanceof StopTimeoutError,
});

/** What a run of the set-up may use: the hub, a local folder, the files a scenario names, the device-loss setting. */
export function runSettings(form: FormSlice): ModelSettings {
  const host = form.remoteHost.trim();
  return {
    ...(host ? { remoteHost: host.replace(/\/?$/, "/") } : {}),
    ...(form.localFolder ? { localFiles: form.localFolder.files } : {}),
    onDeviceLoss: form.deviceLoss,
    files: form.files,
  };
}

export const useLab: UseBoundStore<StoreApi<LabState>> = create<LabState>()((set, get) => ({
  form: createFormSlice(sliceSetter(set, "form"), () => get().form),
  selection: createSelectionSlice(sliceSetter(set, "selection"), () => get().selection, () => session.state.model),
  tokens: createTokensSlice(sliceSetter(set, "tokens"), () => get().tokens, (ids, model) => client.describeTokens(ids, model)),
  view: createViewSlice(sliceSetter(set, "view")),
  layout: createLayoutSlice(sliceSetter(set, "layout"), () => get().layout),
  compare: createCompareSlice(sliceSetter(set, "compare"), () => get().compare, () => ({ selected: get().selection.selected, samples: session.state.model?.samples.length ?? 0 })),
  forks: createForksSlice(sliceSetter(set, "forks"), () => get().forks, {
    session,
    selected: () => get().selection.selected,
    settings: () => runSettings(get().form),
    openComparison(files, a, b) {
      set((s) => ({ compare: { ...s.compare, files: files(s.compare.files), a, b, auto: false, message: null }, view: { ...s.view, tab: "compare" } }));
    },
  }),
  previewProgress: { linesRead: 0, bytesRead: 0, totalBytes: null },
}));

/** Whether the editor's scenario is the shown run's (both read as the parser reads them: its defaults filled in). */
function sameScenario(parsed: Scenario, shown: Scenario): boolean {
  try {
    return equal(parsed, parseScenario(JSON.parse(JSON.stringify(shown))));
  } catch {
    return false;
  }
}

/**
 * Runs the scenario of the set-up (the Scenario JSON editor's text): any run under way is stopped and kept. A
 * scenario that does not parse is the page's error, and nothing starts.
 */
export function startRun(): void {
  const { form } = useLab.getState();
  const problems = form.detached ? [] : setupProblems(form.setup);
  if (problems.length) return session.refuse(`This set-up cannot run:\n${problems.map((p) => `- ${p}`).join("\n")}`);
  let scenario: Scenario;
  try {
    scenario = parseScenarioText(form.scenarioText);
  } catch (e) {
    session.refuse((e as Error).message);
    return;
  }
  const human = form.setup.policy === "human";
  // A fork's scenario, run again unchanged, continues as the fork did (the original's row and turns, its edited first
  // response): that is the fork's run, not its scenario's, and the scenario has no key for it.
  const shown = session.state;
  const continuation = shown.model?.summary.forkContinuation ?? null;
  const fork = continuation && !human && shown.scenario && sameScenario(scenario, shown.scenario) ? continuation : null;
  useLab.getState().tokens.clear();
  const model = session.start(scenario, { settings: { ...runSettings(form), ...(human ? { human: true } : {}), ...(fork ? { fork } : {}) } });
  humanRun = human ? model : null;
}

// A run shown (saved, imported, recovered, a fork, the original of a fork again) makes its scenario the form's: Run
// again, the Scenario JSON and Share link follow the run on screen. A run started from the set-up is its scenario.
session.on((event) => {
  if (event.type === "shown" && event.shown.scenario && !(event.started && event.shown.kind === "run")) useLab.getState().form.showScenario(event.shown.scenario);
});

/** The human run last started: its final scenario (what was typed, as a scripted policy) becomes the editor's. */
let humanRun: RunModel | null = null;
session.on((event) => {
  if (event.type === "ended" && event.model === humanRun && session.state.model === event.model) {
    useLab.getState().form.setScenarioText(prettyScenario(event.scenario));
  }
});

/** The page's side of a preview of file `name` (./run/preview-import.ts): see `RunSession.preview`. */
export function labPreview(name: string, controls: { stop(): void; replaced(): void }): PreviewTarget {
  return session.preview(name, controls, ({ linesRead, bytesRead, totalBytes }) => useLab.setState({ previewProgress: { linesRead, bytesRead, totalBytes } }));
}

/** Supersedes any import or open under way (`RunSession.claim`). */
export const claimShow = (): AbortSignal => session.claim();

// Token texts the worker sent (a model run's token view asked for them).
client.onTokens((model, ids, texts, special) => useLab.getState().tokens.add(model, ids, texts, special));

// The saved runs the comparison offers follow saves and deletes anywhere in the page.
onSavedRunsChange(() => void useLab.getState().compare.refreshSaved());

// Runs under way are checkpointed and runs that end are saved (./run/recovery.ts).
keepRunsOf(session);

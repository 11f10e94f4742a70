/**
 * The page's state. A run's live data lives in a `RunModel` (mutable, outside React's state); the store holds
 * only small values and a `version` that follows the model at most once per animation frame, so 200 events per
 * second cost a few renders per second.
 */

import { create } from "zustand";
import type { RolloutResultJson } from "../scenario/result.js";
import { parseScenarioText, type Scenario } from "../scenario/schema.js";
import type { Preset } from "./presets.js";
import { environmentPortsFor, userEnvironmentsSettled } from "./envs/user-environments.js";
import type { DeviceLossAction } from "../policy/llm/device-loss.js";
import { endUnfinished } from "./run/interrupted.js";
import { notify } from "./run/kept.js";
import type { JsonlProgress } from "../scenario/jsonl-reader.js";
import type { PreviewProgress, PreviewTarget } from "./run/preview-import.js";
import { renderBudget } from "./run/render-budget.js";
import { RunModel } from "./run/run-model.js";
import { DEFAULT_SETUP, scenarioFromSetup, type Setup } from "./setup/setup.js";
import { RolloutWorkerClient, StopTimeoutError, type RunHandle } from "./worker/client.js";
import type { HumanRequest, ModelStatus } from "./worker/protocol.js";

export type RunStatus = "idle" | "running" | "paused" | "finished" | "failed";

/**
 * A big file shown while it is read (./run/preview-import.ts): what the page's banner says about it. How far the
 * reading is (lines, bytes) is in `usePreviewProgress`, apart: it changes often, and every change of this store
 * draws the whole page again.
 */
export interface PreviewInfo extends Pick<PreviewProgress, "phase" | "badLines"> {
  name: string;
  /** Stops reading: the preview goes, the run set aside comes back. */
  stop(): void;
}

/** How far the previewed file is read (`LabState.preview`). */
export const usePreviewProgress = create<JsonlProgress>(() => ({ linesRead: 0, bytesRead: 0, totalBytes: null }));

export interface LocalFolder {
  name: string;
  files: { path: string; file: Blob }[];
}

interface LabState {
  setup: Setup;
  /** The scenario that runs (the form writes it; the JSON editor can change it). */
  scenarioText: string;
  status: RunStatus;
  error: string | null;
  /** The live run (null before the first); while `preview` is set, the preview's model (not the current run). */
  model: RunModel | null;
  /**
   * Set while a big file's samples are shown as they are read (`labPreview`): that is no run yet (status `idle`: not
   * saved, checkpointed or exported; not forked or compared as the current run), and the run it replaced is set
   * aside, as it was, until the file is imported (then it goes) or not (then it comes back).
   */
  preview: PreviewInfo | null;
  version: number;
  /** The scenario the current run was started with. */
  runScenario: Scenario | null;
  result: RolloutResultJson | null;
  modelStatus: ModelStatus | null;
  selected: number;
  selectedTurn: number | null;
  remoteHost: string;
  localFolder: LocalFolder | null;
  /** What a model run does when its WebGPU device is lost: stop, or go on on WASM (a lab setting). */
  deviceLoss: DeviceLossAction;
  setDeviceLoss(action: DeviceLossAction): void;
  /** Token texts in the run model's own vocabulary (model runs), filled in from the worker as needed. */
  tokenTexts: Map<number, { text: string; special: boolean }>;
  tokenTextsVersion: number;
  requestTokenTexts(ids: number[]): void;
  /** Files a scenario names (a replay's run), by name. */
  files: Record<string, string>;
  addFile(name: string, text: string): void;
  /** Human turns waiting for a reply. */
  humanRequests: HumanRequest[];
  answerHuman(requestId: number, text: string): void;
  setScenarioText(text: string): void;
  updateSetup(changes: Partial<Setup>): void;
  loadPreset(preset: Preset): void;
  select(sample: number, turn?: number | null): void;
  moveSelection(dSample: number, dTurn: number): void;
  setRemoteHost(host: string): void;
  setLocalFolder(name: string, files: LocalFolder["files"]): void;
  run(): void;
  pause(): void;
  resume(): void;
  step(): void;
  stop(): void;
  /**
   * Shows a run that was saved or imported, without running anything. With `claim` (what `claimShow` gave the import
   * or open that built it): only if nothing newer superseded it (false then, and nothing changes).
   */
  show(model: RunModel, scenario: Scenario | null, status?: RunStatus, claim?: AbortSignal): boolean;
}

const pretty = (value: unknown) => JSON.stringify(value, null, 2);
const client = new RolloutWorkerClient();
client.onTokens((ids, texts, special) => {
  const { tokenTexts, tokenTextsVersion } = useLab.getState();
  ids.forEach((id, i) => tokenTexts.set(id, { text: texts[i]!, special: special[i]! }));
  useLab.setState({ tokenTextsVersion: tokenTextsVersion + 1 });
});
let current: RunHandle | null = null;

/**
 * The newest way of replacing the run the page shows wins. An import, or a saved or recovered run being opened,
 * takes its time (reading and checking the file, building the run model in slices): it takes a claim first
 * (`claimShow`), and shows its run with it (`show(…, claim)`). Any later claim, a run started (`run`, a fork's run),
 * or another run shown without a claim supersedes it: its signal aborts (its reading and building stop), and its
 * `show` shows nothing (so an older import never replaces a newer one, nor stops a run started meanwhile).
 */
let claim: AbortController | null = null;

/** Supersedes any import or open under way; the signal aborts when something newer supersedes this one. */
export function claimShow(): AbortSignal {
  supersedeClaim();
  claim = new AbortController();
  return claim.signal;
}

function supersedeClaim(): void {
  const was = claim;
  claim = null;
  was?.abort(new DOMException("superseded by a newer run, import or opened run", "AbortError"));
}

/**
 * A live run something else replaces (a run started, an import, a saved or recovered run opened, a link's run) is
 * stopped as Stop stops it, and kept as Stop keeps it: ./run/recovery.ts saves it among the saved runs once it has
 * ended (its checkpoint stays until that save commits). The page says so. Nothing replaces a live run silently.
 */
function stopReplaced(state: Pick<LabState, "status" | "model">, instead: string): void {
  if (!current || (state.status !== "running" && state.status !== "paused")) return;
  const handle = current;
  handle.stop();
  if (state.status === "paused") handle.resume();
  const fork = (state.model as { savedAs?: string } | null)?.savedAs === "fork";
  notify({
    tone: "info",
    text: fork
      ? `The fork under way was stopped (as Stop stops it) and stays with its run's forks: ${instead}.`
      : `The run under way was stopped (as Stop stops it) and is kept among the saved runs: ${instead}.`,
  });
}

/** What the person typed in a human run, per sample and turn: the run's scripted responses. */
let humanTyped: string[][] = [];

/**
 * Coalesces model changes into one store update per frame at most, and fewer when drawing a large run costs more
 * than a share of the main thread (./run/render-budget.ts).
 */
function frameScheduler(flush: () => void): () => void {
  return renderBudget(flush);
}

export const useLab = create<LabState>((set, get) => ({
  setup: DEFAULT_SETUP,
  scenarioText: pretty(scenarioFromSetup(DEFAULT_SETUP)),
  status: "idle",
  error: null,
  model: null,
  preview: null,
  version: 0,
  runScenario: null,
  result: null,
  modelStatus: null,
  selected: 0,
  selectedTurn: null,
  remoteHost: "",
  localFolder: null,
  deviceLoss: "stop",
  setDeviceLoss: (deviceLoss) => set({ deviceLoss }),
  tokenTexts: new Map(),
  tokenTextsVersion: 0,
  requestTokenTexts(ids) {
    const known = get().tokenTexts;
    const missing = [...new Set(ids)].filter((id) => !known.has(id));
    if (missing.length) client.describeTokens(missing);
  },
  files: {},
  addFile: (name, text) => set({ files: { ...get().files, [name]: text } }),
  humanRequests: [],
  answerHuman(requestId, text) {
    const request = get().humanRequests.find((r) => r.requestId === requestId);
    if (!request || !current) return;
    current.answer(requestId, text);
    (humanTyped[request.sample] ??= [])[request.turn] = text;
    set({ humanRequests: get().humanRequests.filter((r) => r.requestId !== requestId) });
  },
  setScenarioText: (scenarioText) => set({ scenarioText }),
  updateSetup(changes) {
    const setup = { ...get().setup, ...changes };
    set({ setup, scenarioText: pretty(scenarioFromSetup(setup)) });
  },
  loadPreset(preset) {
    if ("setup" in preset) set({ setup: preset.setup, scenarioText: pretty(scenarioFromSetup(preset.setup)) });
    else set({ scenarioText: pretty(preset.scenario) });
  },
  select: (selected, turn = null) => set({ selected, selectedTurn: turn }),
  moveSelection(dSample, dTurn) {
    const { model, selected, selectedTurn } = get();
    if (!model || model.samples.length === 0) return;
    const sample = Math.min(model.samples.length - 1, Math.max(0, selected + dSample));
    const turns = model.samples[sample]!.turns.length;
    let turn = dSample !== 0 ? selectedTurn : (selectedTurn ?? -1) + dTurn;
    if (turn !== null) turn = turns === 0 ? null : Math.min(turns - 1, Math.max(0, turn));
    set({ selected: sample, selectedTurn: turn });
  },
  setRemoteHost: (remoteHost) => set({ remoteHost }),
  setLocalFolder: (name, files) => set({ localFolder: { name, files } }),
  run() {
    let scenario: Scenario;
    try {
      scenario = parseScenarioText(get().scenarioText);
    } catch (e) {
      set({ status: "failed", error: (e as Error).message, result: null });
      return;
    }
    supersedeClaim();
    stopReplaced(get(), "a new run started");
    current?.stop();
    dropPreview();
    const model = new RunModel();
    const bump = frameScheduler(() => {
      if (get().model === model) set({ version: model.version });
    });
    set({
      status: "running",
      error: null,
      result: null,
      model,
      version: 0,
      runScenario: scenario,
      selected: 0,
      selectedTurn: null,
      modelStatus: null,
      humanRequests: [],
      tokenTexts: new Map(),
    });
    const { remoteHost, localFolder } = get();
    const human = get().setup.policy === "human";
    humanTyped = [];
    const names = Object.values(scenario.envs).map((e) => e.env);
    const start = () => {
      let handle: RunHandle;
      try {
        handle = client.run(
        scenario,
        {
          onModel: (modelStatus) => set({ modelStatus }),
          onHumanRequest: (request) => set({ humanRequests: [...get().humanRequests, request] }),
          onEvent: (event) => {
            model.apply(event);
            bump();
          },
        },
        {
          ...(remoteHost.trim() ? { remoteHost: remoteHost.trim().replace(/\/?$/, "/") } : {}),
          ...(localFolder ? { localFiles: localFolder.files } : {}),
          ...(human ? { human: true } : {}),
          onDeviceLoss: get().deviceLoss,
          files: get().files,
          ...(labRuns.startPaused ? { startPaused: true } : {}),
          ...(labRuns.holdableGeneration ? { holdableGeneration: true } : {}),
        },
        environmentPortsFor(names),
        );
      } catch (e) {
        // Whatever the run cannot even be handed to its worker for (a scenario that cannot be copied) is its error.
        set({ status: "failed", error: `the run could not start: ${(e as Error).message}`, humanRequests: [] });
        return;
      }
      current = handle;
      // The test hook's (src/app/faults-debug.ts): the worker starts it paused before its first turn (a test steps it).
      if (labRuns.startPaused) set({ status: "paused" });
      handle.result.then(
        (result) => {
          if (current !== handle) return;
          // A human run becomes a scripted scenario: export and share links replay what was typed.
          const finalScenario = human
            ? ({ ...scenario, policy: { kind: "scripted", responses: model.samples.map((_, i) => humanTyped[i] ?? []) } } as Scenario)
            : scenario;
          set({
            status: "finished",
            result,
            version: model.version,
            runScenario: finalScenario,
            humanRequests: [],
            ...(human ? { scenarioText: pretty(finalScenario) } : {}),
          });
        },
        (e: Error) => {
          // What finished stays; the samples still under way end with the reason (a crashed worker, a lost device);
          // after a Stop the worker did not act on in time (it was terminated), they end `cancelled`, as a Stop's do.
          // A run another one replaced (Run again, a saved run shown: both stop it) ends so too, though not shown: a
          // run left "running" would keep its checkpoint written (./run/recovery.ts).
          endUnfinished(model, e.message, e instanceof StopTimeoutError ? "cancelled" : "error");
          if (current !== handle) return;
          set({ status: "failed", error: e.message, version: model.version, humanRequests: [] });
        },
      );
    };
    // A user environment the scenario names may still be loading in its Worker (a shared link runs at once).
    void userEnvironmentsSettled().then(() => {
      if (get().model === model) start(); // unless another run (or a shown run) took over meanwhile
    });
  },
  pause() {
    if (get().status !== "running") return;
    current?.pause();
    set({ status: "paused" });
  },
  resume() {
    if (get().status !== "paused") return;
    current?.resume();
    set({ status: "running" });
  },
  step() {
    if (get().status !== "paused") return;
    current?.step();
  },
  stop() {
    const status = get().status;
    if (status !== "running" && status !== "paused") return;
    current?.stop();
    if (status === "paused") current?.resume();
  },
  show(model, scenario, status = "finished", shownFor) {
    if (shownFor?.aborted) return false;
    if (shownFor && claim?.signal === shownFor) claim = null;
    else supersedeClaim();
    stopReplaced(get(), "the page shows the run opened instead");
    current?.stop();
    current = null;
    if (preview && preview.model === model) {
      // The preview imported: the same model becomes the current run, drawn as it is (the selection stays).
      preview = null;
      const selected = Math.min(get().selected, Math.max(0, model.samples.length - 1));
      set({ model, version: model.version, runScenario: scenario, status, error: null, result: null, preview: null, selected, modelStatus: null });
      return true;
    }
    dropPreview();
    set({ model, version: model.version, runScenario: scenario, status, error: null, selected: 0, selectedTurn: null, modelStatus: null });
    return true;
  },
}));

/** What a preview set aside (the page's run as it was), and how to end the preview when the page replaces it. */
interface Preview {
  model: RunModel;
  aside: Pick<LabState, "model" | "version" | "runScenario" | "status" | "error" | "result" | "selected" | "selectedTurn" | "modelStatus">;
  bump: () => void;
  replaced: () => void;
}
let preview: Preview | null = null;

/** Another run replaces the preview (run, a saved or recovered run shown): the reading stops, nothing comes back. */
function dropPreview(): void {
  const was = preview;
  if (!was) return;
  preview = null;
  useLab.setState({ preview: null });
  was.replaced();
}

/**
 * The page's side of a preview (./run/preview-import.ts) of file `name`: `begin` shows the preview's model, with
 * the current run set aside (refused while a run is live: it would have to stop), `discard` puts that run back as it
 * was, and the import of the previewed model (`show` of that model) makes it the current run. `controls.stop` is the
 * banner's Stop; `controls.replaced` is called when the page shows another run instead (the preview then ends).
 */
export function labPreview(name: string, controls: { stop(): void; replaced(): void }): PreviewTarget {
  let model: RunModel | null = null;
  const mine = () => preview !== null && preview.model === model;
  return {
    begin(m) {
      const state = useLab.getState();
      if (preview || state.status === "running" || state.status === "paused") return false;
      model = m;
      const { version, runScenario, status, error, result, selected, selectedTurn, modelStatus } = state;
      preview = {
        model: m,
        aside: { model: state.model, version, runScenario, status, error, result, selected, selectedTurn, modelStatus },
        // Drawn less often than a live run (a tenth of the main thread, at least twice a second): the main thread also
        // takes in the file's samples, and the sooner it has them all, the sooner the file is imported.
        bump: renderBudget(() => mine() && useLab.setState({ version: m.version }), { share: 0.1, maxWaitMs: 500 }),
        replaced: controls.replaced,
      };
      useLab.setState({
        model: m,
        version: m.version,
        runScenario: null,
        status: "idle",
        error: null,
        result: null,
        selected: 0,
        selectedTurn: null,
        modelStatus: null,
        preview: { name, phase: "reading", badLines: 0, stop: controls.stop },
      });
      usePreviewProgress.setState({ linesRead: 0, bytesRead: 0, totalBytes: null });
      return true;
    },
    changed() {
      if (mine()) preview!.bump();
    },
    progress({ phase, badLines, linesRead, bytesRead, totalBytes }) {
      const shown = useLab.getState().preview;
      if (!mine() || !shown) return;
      usePreviewProgress.setState({ linesRead, bytesRead, totalBytes });
      if (shown.phase !== phase || shown.badLines !== badLines) useLab.setState({ preview: { ...shown, phase, badLines } });
    },
    discard() {
      if (!mine()) return;
      const { aside } = preview!;
      preview = null;
      useLab.setState({ ...aside, preview: null });
    },
  };
}

/**
 * For runs the page starts beside the set-up's own (forks, src/app/fork/): the lab's worker (so a model loaded for
 * the run is reused), and `adopt`, which makes such a run the one the run controls (pause, step, stop) act on.
 */
export const labRuns = {
  client,
  /** Set by the test hook only (`?faults=1`): each run starts paused, before its first turn. */
  startPaused: false,
  /** Set by the test hook only (`?faults=1`): the runs' model generation calls may be held (`holdGeneration`). */
  holdableGeneration: false,
  adopt(handle: RunHandle | null): void {
    // A run started: it supersedes any import or open under way.
    if (handle) supersedeClaim();
    current = handle;
  },
};

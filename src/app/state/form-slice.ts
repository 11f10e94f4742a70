/** The set-up slice: the form, the scenario it writes (the JSON editor may change it), and what a run may use. */

import type { DeviceLossAction } from "../../policy/llm/device-loss.js";
import type { Scenario } from "../../scenario/schema.js";
import type { Preset } from "../presets.js";
import { DEFAULT_SETUP, scenarioFromSetup, setupFromScenario, type Setup } from "../setup/setup.js";
import type { SliceSet } from "./slice.js";

export interface LocalFolder {
  name: string;
  files: { path: string; file: Blob }[];
}

export interface FormSlice {
  setup: Setup;
  /** The scenario that runs (the form writes it; the JSON editor can change it; a run shown puts its own here). */
  scenarioText: string;
  /**
   * Whether `scenarioText` may be other than what the form's fields write (a preset's scenario file, the JSON editor,
   * a run shown whose scenario the form cannot write): the form says so, and a change of a field writes its own.
   */
  detached: boolean;
  /** The preset last loaded, while nothing changed since (the preset picker shows it). */
  preset: string | null;
  remoteHost: string;
  localFolder: LocalFolder | null;
  /** What a model run does when its WebGPU device is lost: stop, or go on on WASM (a lab setting). */
  deviceLoss: DeviceLossAction;
  /** Files a scenario names (a replay's run), by name. */
  files: Record<string, string>;
  setDeviceLoss(action: DeviceLossAction): void;
  addFile(name: string, text: string): void;
  setScenarioText(text: string): void;
  updateSetup(changes: Partial<Setup>): void;
  loadPreset(preset: Preset): void;
  /** A run shown (saved, imported, recovered, forked) makes its scenario the form's: the fields follow when they can. */
  showScenario(scenario: Scenario): void;
  setRemoteHost(host: string): void;
  setLocalFolder(name: string, files: LocalFolder["files"]): void;
}

export const prettyScenario = (value: unknown): string => JSON.stringify(value, null, 2);

export function createFormSlice(set: SliceSet<FormSlice>, get: () => FormSlice): FormSlice {
  return {
    setup: DEFAULT_SETUP,
    scenarioText: prettyScenario(scenarioFromSetup(DEFAULT_SETUP)),
    detached: false,
    preset: null,
    remoteHost: "",
    localFolder: null,
    deviceLoss: "stop",
    files: {},
    setDeviceLoss: (deviceLoss) => set({ deviceLoss }),
    addFile: (name, text) => set((form) => ({ files: { ...form.files, [name]: text } })),
    setScenarioText: (scenarioText) => set({ scenarioText, detached: true, preset: null }),
    updateSetup(changes) {
      const setup = { ...get().setup, ...changes };
      set({ setup, scenarioText: prettyScenario(scenarioFromSetup(setup)), detached: false, preset: null });
    },
    loadPreset(preset) {
      if ("setup" in preset) set({ setup: preset.setup, scenarioText: prettyScenario(scenarioFromSetup(preset.setup)), detached: false, preset: preset.id });
      else set({ scenarioText: prettyScenario(preset.scenario), detached: true, preset: preset.id });
    },
    showScenario(scenario) {
      const setup = setupFromScenario(scenario, get().setup);
      set({ scenarioText: prettyScenario(scenario), preset: null, ...(setup ? { setup, detached: false } : { detached: true }) });
    },
    setRemoteHost: (remoteHost) => set({ remoteHost }),
    setLocalFolder: (name, files) => set({ localFolder: { name, files } }),
  };
}

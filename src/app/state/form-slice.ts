/** The set-up slice: the form, the scenario it writes (the JSON editor may change it), and what a run may use. */

import type { DeviceLossAction } from "../../policy/llm/device-loss.js";
import type { Preset } from "../presets.js";
import { DEFAULT_SETUP, scenarioFromSetup, type Setup } from "../setup/setup.js";
import type { SliceSet } from "./slice.js";

export interface LocalFolder {
  name: string;
  files: { path: string; file: Blob }[];
}

export interface FormSlice {
  setup: Setup;
  /** The scenario that runs (the form writes it; the JSON editor can change it). */
  scenarioText: string;
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
  setRemoteHost(host: string): void;
  setLocalFolder(name: string, files: LocalFolder["files"]): void;
}

export const prettyScenario = (value: unknown): string => JSON.stringify(value, null, 2);

export function createFormSlice(set: SliceSet<FormSlice>, get: () => FormSlice): FormSlice {
  return {
    setup: DEFAULT_SETUP,
    scenarioText: prettyScenario(scenarioFromSetup(DEFAULT_SETUP)),
    remoteHost: "",
    localFolder: null,
    deviceLoss: "stop",
    files: {},
    setDeviceLoss: (deviceLoss) => set({ deviceLoss }),
    addFile: (name, text) => set((form) => ({ files: { ...form.files, [name]: text } })),
    setScenarioText: (scenarioText) => set({ scenarioText }),
    updateSetup(changes) {
      const setup = { ...get().setup, ...changes };
      set({ setup, scenarioText: prettyScenario(scenarioFromSetup(setup)) });
    },
    loadPreset(preset) {
      if ("setup" in preset) set({ setup: preset.setup, scenarioText: prettyScenario(scenarioFromSetup(preset.setup)) });
      else set({ scenarioText: prettyScenario(preset.scenario) });
    },
    setRemoteHost: (remoteHost) => set({ remoteHost }),
    setLocalFolder: (name, files) => set({ localFolder: { name, files } }),
  };
}

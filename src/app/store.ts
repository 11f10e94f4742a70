/** The page's state: the scenario text, the run's status, and its result. */

import { create } from "zustand";
import type { RolloutResultJson } from "../scenario/result.js";
import { runScenario } from "../scenario/run.js";
import { parseScenarioText } from "../scenario/schema.js";
import { PRESETS } from "./presets.js";

export type RunStatus = "idle" | "running" | "finished" | "failed";

interface LabState {
  scenarioText: string;
  status: RunStatus;
  error: string | null;
  result: RolloutResultJson | null;
  selected: number;
  setScenarioText(text: string): void;
  select(sample: number): void;
  run(): Promise<void>;
}

const pretty = (value: unknown) => JSON.stringify(value, null, 2);

export const useLab = create<LabState>((set, get) => ({
  scenarioText: pretty(PRESETS[0]!.scenario),
  status: "idle",
  error: null,
  result: null,
  selected: 0,
  setScenarioText: (scenarioText) => set({ scenarioText }),
  select: (selected) => set({ selected }),
  async run() {
    set({ status: "running", error: null, result: null, selected: 0 });
    try {
      const scenario = parseScenarioText(get().scenarioText);
      const result = await runScenario(scenario);
      set({ status: "finished", result });
    } catch (e) {
      set({ status: "failed", error: (e as Error).message });
    }
  },
}));

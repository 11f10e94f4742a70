/** The page's state: the scenario text, the run's status and live progress, and its result. */

import { create } from "zustand";
import type { RolloutResultJson } from "../scenario/result.js";
import { parseScenarioText } from "../scenario/schema.js";
import { PRESETS } from "./presets.js";
import { RolloutWorkerClient, type RunHandle } from "./worker/client.js";
import type { ModelStatus } from "./worker/protocol.js";

export type RunStatus = "idle" | "running" | "paused" | "finished" | "failed";

interface LabState {
  scenarioText: string;
  status: RunStatus;
  error: string | null;
  result: RolloutResultJson | null;
  model: ModelStatus | null;
  /** Tokens streamed so far in this run. */
  liveTokens: number;
  selected: number;
  remoteHost: string;
  localFolder: { name: string; files: { path: string; file: Blob }[] } | null;
  setRemoteHost(host: string): void;
  setLocalFolder(name: string, files: { path: string; file: Blob }[]): void;
  setScenarioText(text: string): void;
  select(sample: number): void;
  run(): void;
  stop(): void;
}

const pretty = (value: unknown) => JSON.stringify(value, null, 2);
const client = new RolloutWorkerClient();
let current: RunHandle | null = null;

export const useLab = create<LabState>((set, get) => ({
  scenarioText: pretty(PRESETS[0]!.scenario),
  status: "idle",
  error: null,
  result: null,
  model: null,
  liveTokens: 0,
  selected: 0,
  remoteHost: "",
  localFolder: null,
  setRemoteHost: (remoteHost) => set({ remoteHost }),
  setLocalFolder: (name, files) => set({ localFolder: { name, files } }),
  setScenarioText: (scenarioText) => set({ scenarioText }),
  select: (selected) => set({ selected }),
  run() {
    let scenario;
    try {
      scenario = parseScenarioText(get().scenarioText);
    } catch (e) {
      set({ status: "failed", error: (e as Error).message, result: null });
      return;
    }
    set({ status: "running", error: null, result: null, selected: 0, model: null, liveTokens: 0 });
    let tokens = 0;
    const { remoteHost, localFolder } = get();
    const modelSettings = {
      ...(remoteHost.trim() ? { remoteHost: remoteHost.trim().replace(/\/?$/, "/") } : {}),
      ...(localFolder ? { localFiles: localFolder.files } : {}),
    };
    const handle = client.run(scenario, {
      onModel: (model) => set({ model }),
      onEvent: (event) => {
        if (event.type === "token") {
          tokens += 1;
          // Batched: one store update per 16 tokens keeps React work small while tokens stream.
          if (tokens % 16 === 0) set({ liveTokens: tokens });
        }
      },
    }, modelSettings);
    current = handle;
    handle.result.then(
      (result) => current === handle && set({ status: "finished", result, liveTokens: tokens }),
      (e: Error) => current === handle && set({ status: "failed", error: e.message }),
    );
  },
  stop() {
    current?.stop();
  },
}));

/** The presets do what their titles say: the ones "with mistakes" make mistakes, the demos run. */

import { describe, expect, it } from "vitest";
import { runScenario } from "../scenario/run.js";
import { parseScenario } from "../scenario/schema.js";
import { PRESETS } from "./presets.js";
import { scenarioFromSetup } from "./setup/setup.js";

const scenarioOf = (preset: (typeof PRESETS)[number]) => parseScenario("setup" in preset ? scenarioFromSetup(preset.setup) : preset.scenario);

describe("the presets", () => {
  it("an oracle preset with mistakes draws some in its samples (a violation, or prose instead of a call)", async () => {
    const withMistakes = PRESETS.filter((p) => {
      const policy = scenarioOf(p).policy;
      return policy.kind === "oracle" && (policy.error_rate ?? 0) > 0;
    });
    expect(withMistakes.map((p) => p.id).sort()).toEqual(["tools-demo", "workspace"]);
    for (const preset of withMistakes) {
      const result = await runScenario(scenarioOf(preset));
      const flagged = result.samples.flatMap((s) => s.message_log).filter((m) => m.role === "assistant" && m.invalid_action_violations?.length);
      expect(flagged.length, preset.title).toBeGreaterThan(0);
    }
  });
});

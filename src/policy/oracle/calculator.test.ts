import { describe, expect, it } from "vitest";
import { Rng, wrapToolResponseEnvelope, type EnvMessage, type Metadata } from "../../core/index.js";
import { CalculatorEnv, calculatorDatum, generateCalculatorDataset } from "../../envs/calculator/index.js";
import type { DatasetDatum } from "../../envs/types.js";
import { cutAtStopStrings } from "../text-policy.js";
import { answeredCallValues, calculatorOracle, numberText, planProblem } from "./calculator.js";

interface Episode {
  total: number;
  responses: string[];
  observations: string[];
}

/** Drives the oracle against the environment as a rollout would: the context is prompt + responses + observations. */
function play(datum: DatasetDatum, seed: number, errorRate = 0, envelope = false): Episode {
  const env = new CalculatorEnv();
  let context = datum.message_log[0]!.content;
  const log: EnvMessage[] = [{ role: "user", content: context }];
  let metadata: Metadata = datum.extra_env_info;
  let stops = datum.stop_strings;
  const episode: Episode = { total: 0, responses: [], observations: [] };
  for (let turn = 0; turn < 20; turn++) {
    const text = calculatorOracle.respond({ promptText: context, stopStrings: stops, rng: Rng.derive(seed, 0, turn), errorRate });
    const cut = cutAtStopStrings(text, stops);
    context += cut ?? `${text}<|im_end|>`; // an uncut response ends with EOS
    log.push({ role: "assistant", content: cut ?? text });
    episode.responses.push(cut ?? text);
    const out = env.step([log], [metadata]);
    const observation = out.observations[0]!;
    log.push(observation);
    episode.observations.push(observation.content);
    context += envelope ? wrapToolResponseEnvelope(observation.content) : observation.content;
    episode.total += (out.rewards as number[])[0]!;
    if (out.terminateds[0]) return episode;
    metadata = out.metadata[0] ?? metadata;
    stops = out.next_stop_strings?.[0] ?? null;
  }
  throw new Error("the episode did not end");
}

describe("reading the context", () => {
  it("plans the operations in evaluation order", () => {
    expect(planProblem("((3 + 5) * 2) - 4")).toEqual([
      { left: { literal: 3 }, op: "sum", right: { literal: 5 } },
      { left: { step: 0 }, op: "prod", right: { literal: 2 } },
      { left: { step: 1 }, op: "diff", right: { literal: 4 } },
    ]);
    expect(planProblem("8 / (2 * 2)")).toEqual([
      { left: { literal: 2 }, op: "prod", right: { literal: 2 } },
      { left: { literal: 8 }, op: "div", right: { step: 0 } },
    ]);
    expect(planProblem("7")).toEqual([]);
    expect(planProblem("3 + ")).toBeNull();
  });

  it("counts only the calls answered with a result, skipping the prompt's examples", () => {
    const text =
      "[3, 5, sum]<call: calculator><result>8.00000</result>" +
      "[8, 2, prod]<call: calculator>" +
      wrapToolResponseEnvelope("<result>16.00000</result>") +
      "[16, 0, div]<call: calculator><error>Calculation failed.";
    expect(answeredCallValues(text)).toEqual([8, 16]);
  });

  it("writes numbers that Python's float() reads back exactly", () => {
    expect(numberText(16)).toBe("16");
    expect(numberText(-2)).toBe("-2");
    expect(numberText(2 / 3)).toBe("0.6666666666666666");
    expect(numberText(0.1 + 0.2)).toBe("0.30000000000000004");
    expect(numberText(1e21)).toBe("1e+21");
    expect(numberText(-0)).toBe("-0");
  });

  it("recognises calculator prompts only", () => {
    expect(calculatorOracle.matches(calculatorDatum("3 + 5", 8, 3, "t").message_log[0]!.content)).toBe(true);
    expect(calculatorOracle.matches("<|im_start|>user\nSolve: 7 - 2<|im_end|>\n<|im_start|>assistant\n")).toBe(true);
    expect(calculatorOracle.matches("Solve: 6 / 4")).toBe(true);
    expect(calculatorOracle.matches("===== SLIDING PUZZLE =====")).toBe(false);
    expect(calculatorOracle.matches("Solve: the puzzle")).toBe(false);
  });

  it("calls the first step, then the next with the previous result", () => {
    const prompt = calculatorDatum("(3 + 5) * 2", 16, 4, "t").message_log[0]!.content;
    const respond = (promptText: string) =>
      calculatorOracle.respond({ promptText, stopStrings: ["<call: calculator>"], rng: new Rng(0), errorRate: 0 });
    expect(respond(prompt)).toBe("[3, 5, sum]<call: calculator>");
    const after = `${prompt}[3, 5, sum]<call: calculator><result>8.00000</result>`;
    expect(respond(after)).toBe("[8, 2, prod]<call: calculator>");
    expect(respond(`${after}[8, 2, prod]<call: calculator><result>16.00000</result>`)).toBe("16");
  });
});

describe("against the environment", () => {
  it("gets reward 1.0 on 20 seeded datasets of 3-step problems, raw and enveloped observations", () => {
    for (let seed = 0; seed < 20; seed++) {
      const data = generateCalculatorDataset({ size: 4, seed, config: { steps: 3 }, taskName: "t" });
      data.forEach((datum, i) => {
        const episode = play(datum, seed, 0, (seed + i) % 2 === 1);
        expect(episode.total).toBe(1.0);
        expect(episode.responses).toHaveLength(4);
        expect(episode.observations.at(-1)).toMatch(/^Correct! The final answer is -?\d+\.\d\d\.$/);
      });
    }
  });

  it("feeds exact (not 5-decimal) results forward", () => {
    const episode = play(calculatorDatum("(2 / 3) + 1", 2 / 3 + 1, 4, "t"), 0);
    expect(episode.responses).toEqual([
      "[2, 3, div]<call: calculator>",
      "[0.6666666666666666, 1, sum]<call: calculator>",
      "1.6666666666666665",
    ]);
    expect(episode.observations[0]).toBe("<result>0.66667</result>");
    expect(episode.total).toBe(1.0);
  });

  it("with errorRate 0.3 makes accepted mistakes that feed forward, deterministically for a seed", () => {
    const runs = (seed: number) =>
      generateCalculatorDataset({ size: 4, seed, config: { steps: 3 }, taskName: "t" }).map((d) => play(d, seed, 0.3));
    let solved = 0;
    let wrong = 0;
    for (let seed = 0; seed < 10; seed++) {
      const first = runs(seed);
      expect(runs(seed)).toEqual(first);
      for (const episode of first) {
        // Every mistake is an accepted call: the episode always ends on a final answer.
        expect(episode.observations.some((o) => o.startsWith("<error>"))).toBe(false);
        expect(episode.observations.at(-1)).toMatch(/^(Correct!|Incorrect final answer\.)/);
        if (episode.total === 1) solved++;
        else wrong++;
      }
    }
    expect(solved).toBeGreaterThan(0);
    expect(wrong).toBeGreaterThan(0);
    expect(runs(100)).not.toEqual(runs(101));
  });

  it("with errorRate 1 makes a mistake on every call turn and still answers", () => {
    for (let seed = 0; seed < 10; seed++) {
      const datum = generateCalculatorDataset({ size: 1, seed, config: { steps: 3 }, taskName: "t" })[0]!;
      const clean = play(datum, seed, 0).responses;
      const erring = play(datum, seed, 1).responses;
      expect(erring).toHaveLength(4);
      for (let i = 0; i < 3; i++) expect(erring[i]).not.toBe(clean[i]);
      expect(erring[3]).toMatch(/^-?\d/);
    }
  });
});

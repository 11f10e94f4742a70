import { describe, expect, it } from "vitest";
import { byteLevelTokenizer } from "../core/index.js";
import { environmentLookup } from "../envs/index.js";
import { loadCheckoutEnvironments } from "../cli/checkout-environments.js";
import { TextPolicy } from "../policy/text-policy.js";
import { vocabularyOf, vocabularyTokenizer } from "../cli/training-vocabulary.js";
import { VOCAB_SIZE } from "../core/tokenizer/byte-level.js";
import { collectEpisodes } from "./collect.js";
import type { TrainingEpisode } from "./episode.js";
import { learnMerges } from "./vocabulary.js";
import { possibleRange } from "./number-guess-solver.js";
import { ENVIRONMENT_PLANS, HELD_OUT_SEED_BASE, splitSeeds } from "./plan.js";

const environments = environmentLookup(await loadCheckoutEnvironments());
const decode = (ids: number[]) => byteLevelTokenizer.decode(ids);

/** The text of each maximal run of mask "1" (the learned spans). */
function learnedSpans(ids: number[], mask: string): string[] {
  return [...mask.matchAll(/1+/g)].map((m) => decode(ids.slice(m.index, m.index + m[0].length)));
}

describe("training episodes from the labelled oracle", () => {
  it("covers every environment: the whole context as ids, the loss on the assistant's planned turns only", async () => {
    for (const plan of ENVIRONMENT_PLANS) {
      const { episodes, failed } = await collectEpisodes(plan, { split: "train", seeds: 2, samplesPerSeed: 2, errorRate: 0.3, oracleSeed: 0, environments });
      expect(failed, plan.env).toBe(0);
      expect(episodes, plan.env).toHaveLength(4);
      for (const e of episodes) {
        expect(e.mask).toHaveLength(e.ids.length);
        expect(e.mask[0]).toBe("0"); // the prompt
        expect(learnedSpans(e.ids, e.mask).length).toBe(e.turns - e.mistakes.length);
      }
      // Someone solved something.
      expect(episodes.some((e) => e.total_reward > 0), plan.env).toBe(true);
    }
  });

  it("with a trained vocabulary's merges: the same texts in fewer ids, the same spans learned and masked", async () => {
    const workspace = ENVIRONMENT_PLANS.find((p) => p.env === "workspace")!;
    const options = { split: "train" as const, seeds: 1, samplesPerSeed: 3, errorRate: 0.5, oracleSeed: 2, environments };
    const bytes = await collectEpisodes(workspace, options);
    const merges = learnMerges(bytes.episodes.map((e) => decode(e.ids)), 300);
    const tokenizer = await vocabularyTokenizer(vocabularyOf(merges));
    const merged = await collectEpisodes(workspace, { ...options, tokenizer });
    expect(merged.episodes).toHaveLength(bytes.episodes.length);
    merged.episodes.forEach((e, i) => {
      const b = bytes.episodes[i]!;
      expect(tokenizer.decode(e.ids)).toBe(decode(b.ids));
      expect(e.ids.length).toBeLessThan(0.6 * b.ids.length);
      expect(Math.max(...e.ids)).toBeGreaterThanOrEqual(VOCAB_SIZE);
      for (const mark of ["1", "2"]) {
        const spans = (ids: number[], mask: string, text: (ids: number[]) => string) =>
          [...mask.matchAll(new RegExp(`${mark}+`, "g"))].map((m) => text(ids.slice(m.index, m.index + m[0].length)));
        expect(spans(e.ids, e.mask, (ids) => tokenizer.decode(ids)), `mask ${mark}`).toEqual(spans(b.ids, b.mask, decode));
      }
    });
  });

  it("marks a mistake exactly where the oracle's text differs from its plan, and recovers after it", async () => {
    const puzzle = ENVIRONMENT_PLANS.find((p) => p.env === "sliding_puzzle")!;
    const { episodes } = await collectEpisodes(puzzle, { split: "train", seeds: 4, samplesPerSeed: 3, errorRate: 0.5, oracleSeed: 1, environments });
    const withMistakes = episodes.filter((e) => e.mistakes.length > 0);
    expect(withMistakes.length).toBeGreaterThan(0);
    const clean = await collectEpisodes(puzzle, { split: "train", seeds: 4, samplesPerSeed: 3, errorRate: 0, oracleSeed: 1, environments });
    expect(clean.episodes.every((e) => e.mistakes.length === 0)).toBe(true);
    // Every learned span of an erring run is a well-formed action, as the error-free oracle writes them.
    const planned = /^<think>\nBoard: [\d_]+( [\d_]+)*( \/ [\d_]+( [\d_]+)*)+\.\nEmpty: row \d, column \d\.\n<\/think>\n<action>(up|down|left|right)<\/action>$/;
    for (const e of withMistakes) for (const span of learnedSpans(e.ids, e.mask)) expect(span).toMatch(planned);
    // Each mistake is one span marked 2 (never learned), none of them a planned action.
    for (const e of withMistakes) {
      const spans = [...e.mask.matchAll(/2+/g)].map((m) => decode(e.ids.slice(m.index, m.index + m[0].length)));
      expect(spans).toHaveLength(e.mistakes.length);
      for (const span of spans) expect(span).not.toMatch(planned);
    }
  });

  it("lets a learner write some turns in the oracle's place: its turns never learned, the oracle's recoveries learned", async () => {
    const puzzle = ENVIRONMENT_PLANS.find((p) => p.env === "sliding_puzzle")!;
    // A learner that slips the way a byte-level model does on even turns (a misspelled action the environment
    // refuses: malformed) and on odd turns moves the blank away (well-formed, whether or not the slide works).
    const slip = "<action>upp</action>";
    const move = "<action>left</action>";
    const learner = new TextPolicy(byteLevelTokenizer, ({ turn }) => (turn % 2 === 0 ? slip : move));
    const common = { split: "train" as const, seeds: 4, samplesPerSeed: 3, errorRate: 0, oracleSeed: 1, environments };
    const { episodes } = await collectEpisodes(puzzle, { ...common, learner: { generation: learner, rate: 0.4 } });
    const planned = /^<think>\nBoard: [\d_]+( [\d_]+)*( \/ [\d_]+( [\d_]+)*)+\.\nEmpty: row \d, column \d\.\n<\/think>\n<action>(up|down|left|right)<\/action>$/;
    const withLearner = episodes.filter((e) => (e.learner_turns ?? []).length > 0);
    expect(withLearner.length).toBeGreaterThan(0);
    expect(episodes.some((e) => e.learner_turns === undefined)).toBe(true); // a 40% draw leaves some samples to the oracle alone
    const spans = (e: TrainingEpisode, mark: string) => [...e.mask.matchAll(new RegExp(`${mark}+`, "g"))].map((m) => decode(e.ids.slice(m.index, m.index + m[0].length)));
    for (const e of withLearner) {
      expect(e.mistakes).toEqual([]);
      // The learner's turns are the spans marked 2 (well-formed) and 3 (its slips), its text exactly; every learned
      // span is the oracle's plan.
      const turns = e.learner_turns!;
      expect(e.learner_slips ?? []).toEqual(turns.filter((t) => t % 2 === 0));
      expect(spans(e, "3")).toEqual(turns.filter((t) => t % 2 === 0).map(() => slip));
      expect(spans(e, "2")).toEqual(turns.filter((t) => t % 2 === 1).map(() => move));
      for (const span of learnedSpans(e.ids, e.mask)) expect(span).toMatch(planned);
      expect(learnedSpans(e.ids, e.mask).length).toBe(e.turns - turns.length);
    }
    expect(withLearner.some((e) => (e.learner_slips ?? []).length > 0)).toBe(true);
    expect(withLearner.some((e) => e.learner_turns!.some((t) => t % 2 === 1))).toBe(true);
    // The oracle still solves from the states the learner left: a slip costs a turn, not the puzzle.
    expect(withLearner.some((e) => e.total_reward > 0)).toBe(true);
    // Every turn the learner's: nothing left to learn.
    const all = await collectEpisodes(puzzle, { ...common, seeds: 1, learner: { generation: learner, rate: 1 } });
    for (const e of all.episodes) expect(e.mask).not.toContain("1");
  });

  it("keeps held-out seeds and tasks out of the training split", async () => {
    expect(splitSeeds("held_out", 2)).toEqual([HELD_OUT_SEED_BASE, HELD_OUT_SEED_BASE + 1]);
    const puzzle = ENVIRONMENT_PLANS.find((p) => p.name === "sliding_puzzle_shuffled")!;
    const heldOut = await collectEpisodes(puzzle, { split: "held_out", seeds: 3, samplesPerSeed: 3, errorRate: 0.2, oracleSeed: 0, environments });
    const train = await collectEpisodes(puzzle, { split: "train", seeds: 20, samplesPerSeed: 3, errorRate: 0.2, oracleSeed: 0, environments, excludeTasks: heldOut.tasks });
    expect(train.excluded).toBeGreaterThan(0); // 2×2 boards recur: seeds alone would leak
    expect(train.episodes.length + train.excluded).toBe(60);
    const heldOutPrompts = new Set([...heldOut.tasks].map((t) => JSON.stringify(JSON.parse(t)[0][0].content)));
    for (const e of train.episodes) expect(heldOutPrompts.has(JSON.stringify(decode(e.ids.slice(0, e.mask.indexOf("1")))))).toBe(false);
    // The default puzzle is held out by seed only: its recurring tasks are kept, and counted.
    const defaults = ENVIRONMENT_PLANS.find((p) => p.name === "sliding_puzzle")!;
    const defaultHeldOut = await collectEpisodes(defaults, { split: "held_out", seeds: 3, samplesPerSeed: 3, errorRate: 0.2, oracleSeed: 0, environments });
    const kept = await collectEpisodes(defaults, { split: "train", seeds: 20, samplesPerSeed: 3, errorRate: 0.2, oracleSeed: 0, environments, excludeTasks: defaultHeldOut.tasks });
    expect(kept.episodes).toHaveLength(60);
    expect(kept.heldOutTasksKept).toBeGreaterThan(0);
  });

  it("opens the workspace's planned tool calls with a paired think block, which the environment accepts", async () => {
    const workspace = ENVIRONMENT_PLANS.find((p) => p.env === "workspace")!;
    const { episodes } = await collectEpisodes(workspace, { split: "train", seeds: 2, samplesPerSeed: 3, errorRate: 0, oracleSeed: 0, environments });
    for (const e of episodes) {
      expect(e.total_reward).toBe(1); // no malformed-thinking penalty: the blocks are closed
      for (const span of learnedSpans(e.ids, e.mask)) expect(span).toMatch(/^<think>\nNext: (run_shell|read_file|write_file|task_complete)\.\n<\/think>\n\n<tool_call>\n/);
    }
  });

  it("with notFoundThoughts: a planned call right after a look-up answered 'No such file' names the failed call's tool first, and only there", async () => {
    const workspace = ENVIRONMENT_PLANS.find((p) => p.env === "workspace")!;
    const options = { split: "train" as const, seeds: 4, samplesPerSeed: 10, errorRate: 0.5, oracleSeed: 0, environments, lookAlikeWeight: 50 };
    const { episodes } = await collectEpisodes(workspace, { ...options, notFoundThoughts: true });
    const plain = await collectEpisodes(workspace, options);
    const seen = { after: 0, elsewhere: 0 };
    for (const [i, e] of episodes.entries()) {
      // The same rollouts, but for the think blocks: the mistakes (and so the observations) are the same draws.
      expect(e.mistakes, `episode ${i}`).toEqual(plain.episodes[i]!.mistakes);
      for (const m of e.mask.matchAll(/1+/g)) {
        const before = decode(e.ids.slice(0, m.index));
        const observation = before.slice(before.lastIndexOf("</tool_call>"));
        const span = decode(e.ids.slice(m.index, m.index + m[0].length));
        // The shell names the failed command: `cat:` for read_file, `grep:` for run_shell.
        const failed = /\n(cat|grep): \S+: No such file or directory/.exec(observation)?.[1];
        if (failed) {
          seen.after++;
          const tool = failed === "cat" ? "read_file" : "run_shell";
          expect(span).toMatch(new RegExp(`^<think>\\nThe ${tool} call found no such file\\.\\nNext: ${tool}\\.\\n</think>\\n\\n<tool_call>\\n`));
        } else {
          seen.elsewhere++;
          expect(span).toMatch(/^<think>\nNext: (run_shell|read_file|write_file|task_complete)\.\n<\/think>\n\n<tool_call>\n/);
        }
      }
      expect(e.total_reward, `episode ${i}`).toBe(plain.episodes[i]!.total_reward); // the blocks are closed: no penalty
    }
    expect(seen.after).toBeGreaterThan(3);
    expect(seen.elsewhere).toBeGreaterThan(seen.after);
  });

  it("writes the puzzle board as it stands into each planned move's think block, one slide apart, ending solved", async () => {
    const puzzle = ENVIRONMENT_PLANS.find((p) => p.name === "sliding_puzzle_shuffled")!;
    const { episodes } = await collectEpisodes(puzzle, { split: "train", seeds: 2, samplesPerSeed: 4, errorRate: 0, oracleSeed: 0, environments });
    const boards = (e: (typeof episodes)[number]) =>
      learnedSpans(e.ids, e.mask).map((span) => {
        const [, rows, move] = /^<think>\nBoard: (.+)\.\nEmpty: row \d, column \d\.\n<\/think>\n<action>(\w+)<\/action>$/.exec(span)!;
        return { cells: rows!.split(" / ").flatMap((r) => r.split(" ")), move: move! };
      });
    const multiTurn = episodes.filter((e) => e.turns >= 3);
    expect(multiTurn.length).toBeGreaterThan(0);
    for (const e of multiTurn) {
      expect(e.total_reward).toBe(1);
      const seen = boards(e);
      // The first board is the prompt's, cell for cell (the rendered rows' numbers, blanks as "_").
      const prompt = decode(e.ids.slice(0, e.mask.indexOf("1")));
      const rendered = /Current Board State:\n\n\n  \+-+\+\n((?:\d+ \|[^\n]*\|\n)+)/.exec(prompt)![1]!;
      const n = seen[0]!.cells.length ** 0.5;
      const cellsOf = (line: string) => {
        const inner = line.slice(line.indexOf("|") + 1, line.lastIndexOf("|"));
        const width = inner.length / n;
        return Array.from({ length: n }, (_, k) => inner.slice(k * width, (k + 1) * width).trim() || "_");
      };
      expect(seen[0]!.cells).toEqual(rendered.trim().split("\n").flatMap(cellsOf));
      // Consecutive boards differ by one tile swapped with the blank.
      for (let t = 1; t < seen.length; t++) {
        const changed = seen[t]!.cells.flatMap((c, i) => (c === seen[t - 1]!.cells[i] ? [] : [i]));
        expect(changed).toHaveLength(2);
        expect(changed.some((i) => seen[t]!.cells[i] === "_")).toBe(true);
      }
    }
  });

  it("bisects the number-guess range from the context's answers", () => {
    const prompt = "I am thinking of a number from 1 to 20. Guess it: answer <guess>N</guess>.";
    expect(possibleRange(prompt)).toEqual({ lo: 1, hi: 20 });
    const after = `${prompt}<guess>10</guess><environment>higher (4 guesses left)</environment>\n<guess>15</guess><environment>lower (3 guesses left)</environment>`;
    expect(possibleRange(after)).toEqual({ lo: 11, hi: 14 });
  });
});

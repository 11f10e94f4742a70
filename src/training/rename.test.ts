import { describe, expect, it } from "vitest";
import { byteLevelTokenizer, type TokenizerInterface } from "../core/index.js";
import { environmentLookup } from "../envs/index.js";
import { CONFIG_FILE_NAMES, LOG_FILE_NAMES } from "../envs/workspace/index.js";
import { loadCheckoutEnvironments } from "../cli/checkout-environments.js";
import { readVocabulary, vocabularyTokenizer } from "../cli/training-vocabulary.js";
import { TRAINED_WEIGHTS_FILE } from "../policy/builtin-model/write-folder.js";
import { collectEpisodes } from "./collect.js";
import { ENVIRONMENT_PLANS, WORKSPACE_RENAMES } from "./plan.js";
import { renameTaskFile } from "./rename.js";

const environments = environmentLookup(await loadCheckoutEnvironments());
const workspace = ENVIRONMENT_PLANS.find((p) => p.name === "workspace")!;
const options = { split: "train" as const, seeds: 2, samplesPerSeed: 10, errorRate: 0.3, oracleSeed: 0, environments };
const ORIGINAL = [...CONFIG_FILE_NAMES, ...LOG_FILE_NAMES];

/** builtin:trained's merges, as its committed weights file records them (a file name is one token or two there). */
const trainedTokenizer = () => vocabularyTokenizer(readVocabulary(TRAINED_WEIGHTS_FILE));
const FILE_TASK = /Task: .*?\/workspace\/(?:logs\/)?(\w+)\.(ini|log)/;

/** The text of each maximal run of a mask mark. */
const spans = (t: TokenizerInterface, ids: number[], mask: string, mark: string) =>
  [...mask.matchAll(new RegExp(`${mark}+`, "g"))].map((m) => t.decode(ids.slice(m.index, m.index + m[0].length)));

describe("renaming the task's file in training episodes", () => {
  for (const [label, load] of [["byte-level", async () => byteLevelTokenizer], ["builtin:trained's merges", trainedTokenizer]] as const) {
    it(`renames it everywhere in the transcript, learned turns included, and nothing else (${label})`, async () => {
      const tokenizer = await load();
      const plain = await collectEpisodes(workspace, { ...options, tokenizer });
      const renamed = await collectEpisodes(workspace, { ...options, tokenizer, renameRate: 1 });
      const fileTasks = plain.episodes.filter((e) => FILE_TASK.test(tokenizer.decode(e.ids)));
      expect(fileTasks.length).toBeGreaterThan(2);
      expect(renamed.renamed).toBe(fileTasks.length);
      // Some learned call names the renamed file (what the augmentation is for).
      expect(renamed.episodes.some((e) => FILE_TASK.test(tokenizer.decode(e.ids)) && spans(tokenizer, e.ids, e.mask, "1").some((s) => WORKSPACE_RENAMES.pool.some((n) => s.includes(`/${n}.`))))).toBe(true);
      plain.episodes.forEach((before, i) => {
        const after = renamed.episodes[i]!;
        const text = tokenizer.decode(after.ids);
        expect(after.mask).toHaveLength(after.ids.length);
        const task = FILE_TASK.exec(tokenizer.decode(before.ids));
        if (!task) {
          expect(after).toEqual(before); // the other tasks are untouched
          return;
        }
        const [, name, ext] = task;
        const to = FILE_TASK.exec(text)![1]!;
        expect(WORKSPACE_RENAMES.pool).toContain(to);
        // The text is the old one with the file's name replaced wherever the path holds it: the prompt, the
        // oracle's calls, the environment's answers.
        const path = (n: string) => (ext === "log" ? `/workspace/logs/${n}.log` : `/workspace/${n}.ini`);
        expect(text).toBe(tokenizer.decode(before.ids).split(path(name!)).join(path(to)));
        expect(text).not.toContain(path(name!));
        // The learned and masked turns are the same turns, their texts renamed the same way.
        for (const mark of ["1", "2"]) {
          expect(spans(tokenizer, after.ids, after.mask, mark)).toEqual(spans(tokenizer, before.ids, before.mask, mark).map((s) => s.split(path(name!)).join(path(to))));
        }
      });
    });
  }

  it("renames the share asked for, the same ones for the same seed, and never the held-out split", async () => {
    const half = await collectEpisodes(workspace, { ...options, seeds: 4, renameRate: 0.5 });
    const again = await collectEpisodes(workspace, { ...options, seeds: 4, renameRate: 0.5 });
    expect(again.episodes).toEqual(half.episodes);
    const all = await collectEpisodes(workspace, { ...options, seeds: 4, renameRate: 1 });
    expect(half.renamed).toBeGreaterThan(0.25 * all.renamed);
    expect(half.renamed).toBeLessThan(0.75 * all.renamed);
    const heldOut = await collectEpisodes(workspace, { ...options, split: "held_out", renameRate: 1 });
    expect(heldOut.renamed).toBe(0);
    // Other plans have no rule: nothing to rename.
    const puzzle = await collectEpisodes(ENVIRONMENT_PLANS.find((p) => p.name === "sliding_puzzle")!, { ...options, seeds: 1, samplesPerSeed: 2, renameRate: 1 });
    expect(puzzle.renamed).toBe(0);
  });

  it("with sameTokenCount gives only a name as many tokens long as the one it replaces: one with builtin:trained's merges", async () => {
    const tokenizer = await trainedTokenizer();
    const length = (n: string) => tokenizer.encode(`/${n}`).length;
    // The environment's names and every name of tokenPool are one token each in that vocabulary.
    for (const n of [...ORIGINAL.map((o) => o.split(".")[0]!), ...WORKSPACE_RENAMES.tokenPool!]) expect(length(n), n).toBe(1);
    // Without the option most of pool's names are several tokens: what the option is for.
    expect(WORKSPACE_RENAMES.pool.filter((n) => length(n) > 1).length).toBeGreaterThan(WORKSPACE_RENAMES.pool.length / 2);
    const renamed = await collectEpisodes(workspace, { ...options, seeds: 4, tokenizer, renameRate: 1, renameSameTokens: true });
    expect(renamed.renamed).toBeGreaterThan(5);
    const given = new Set<string>();
    for (const e of renamed.episodes) {
      const task = FILE_TASK.exec(tokenizer.decode(e.ids));
      if (task) given.add(task[1]!);
    }
    expect(given.size).toBeGreaterThan(5);
    for (const n of given) expect(length(n), n).toBe(1);
    for (const n of given) expect([...WORKSPACE_RENAMES.pool, ...WORKSPACE_RENAMES.tokenPool!]).toContain(n);
    // Byte-level, a name of as many bytes.
    const bytes = await collectEpisodes(workspace, { ...options, seeds: 2, renameRate: 1, renameSameTokens: true });
    const plain = await collectEpisodes(workspace, { ...options, seeds: 2 });
    plain.episodes.forEach((before, i) => {
      const from = FILE_TASK.exec(byteLevelTokenizer.decode(before.ids));
      if (from) expect(FILE_TASK.exec(byteLevelTokenizer.decode(bytes.episodes[i]!.ids))![1]).toHaveLength(from[1]!.length);
    });
  });

  it("with sameTokenCount and no name of the right length, names the episode and the length instead of renaming to another length", () => {
    const ids = byteLevelTokenizer.encode("Task: fix /workspace/service.ini");
    const episode = { env: "workspace", split: "train" as const, dataset_seed: 3, idx: 7, total_reward: 0, termination: "terminated", turns: 0, mistakes: [], ids, mask: "0".repeat(ids.length) };
    const rules = { files: WORKSPACE_RENAMES.files, pool: ["x"], tokenPool: ["much-too-long"] };
    expect(() => renameTaskFile(episode, rules, byteLevelTokenizer, { rate: 1, seed: 0, sameTokenCount: true })).toThrow(
      "rename: no name of the pool is 8 tokens long in this vocabulary, as '/service' is (workspace episode 7, dataset seed 3)",
    );
    // Without the option the pool's names are given whatever their length.
    expect(renameTaskFile(episode, rules, byteLevelTokenizer, { rate: 1, seed: 0 }).renamed).toEqual({ from: "workspace/service.ini", to: "workspace/x.ini" });
  });

  it("gives no name the environment uses, and leaves an episode with no such file as it is", () => {
    for (const n of [...WORKSPACE_RENAMES.pool, ...WORKSPACE_RENAMES.tokenPool!]) expect(ORIGINAL.map((o) => o.split(".")[0])).not.toContain(n);
    const episode = { env: "workspace", split: "train" as const, dataset_seed: 0, idx: 0, total_reward: 0, termination: "terminated", turns: 0, mistakes: [], ids: byteLevelTokenizer.encode("Task: list /workspace/src"), mask: "0".repeat(25) };
    expect(renameTaskFile(episode, WORKSPACE_RENAMES, byteLevelTokenizer, { rate: 1, seed: 0 })).toEqual({ episode, renamed: null });
  });
});

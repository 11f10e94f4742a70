/**
 * Runs the labelled oracle (the built-in oracles and the number-guess solver) through `runScenario` for each
 * environment plan and dataset seed, and turns the samples into training episodes. Samples that ended in an error
 * are left out; so are training samples whose task is one of the held-out tasks given in `excludeTasks`.
 *
 * A task is a datum's initial messages and `extra_env_info` (the board, the problem, the file tree), so two
 * samples with the same prompt but other files are different tasks. Plans with `heldOutBy: "seed"` (the number
 * guess: the prompt never names the secret, and there are only `max_number` of them; the default puzzle) are kept
 * apart by seed only, and the training samples with a held-out task are counted (`heldOutTasksKept`).
 */

import { byteLevelTokenizer, type GenerationInterface, type TokenizerInterface } from "../core/index.js";
import type { EnvironmentLookup } from "../envs/index.js";
import { ORACLE_SOLVERS } from "../policy/oracle/index.js";
import { makeWorkspaceOracle, workspaceOracle, type WorkspaceOracleOptions } from "../policy/oracle/workspace.js";
import { prepareScenario, runScenario } from "../scenario/run.js";
import { parseScenario } from "../scenario/schema.js";
import { judgeTurns, type JudgedSample } from "../scenario/turn-verdicts.js";
import { episodeFromSample, type TrainingEpisode } from "./episode.js";
import { labelledOraclePolicy } from "./labelled-oracle.js";
import { learnerMixPolicy } from "./learner-mix.js";
import { numberGuessSolver } from "./number-guess-solver.js";
import { planScenario, splitSeeds, type EnvironmentPlan, type Split } from "./plan.js";
import { renameTaskFile } from "./rename.js";

export const TRAINING_SOLVERS = [...ORACLE_SOLVERS, numberGuessSolver];

/**
 * The training solvers, the workspace's making its look-alike mistake `lookAlikeWeight` times as often as each other
 * kind and its path-only write `pathOnlyWriteWeight` times, its write_file calls in the order `contentFirstWrites` says
 * (`WorkspaceOracleOptions`); the lab's own where all are as the lab's oracle.
 */
export function trainingSolvers(workspace: Pick<WorkspaceOracleOptions, "lookAlikeWeight" | "pathOnlyWriteWeight" | "contentFirstWrites"> = {}) {
  if ((workspace.lookAlikeWeight ?? 1) === 1 && (workspace.pathOnlyWriteWeight ?? 0) === 0 && !workspace.contentFirstWrites) return TRAINING_SOLVERS;
  const oracle = makeWorkspaceOracle(workspace);
  return TRAINING_SOLVERS.map((solver) => (solver === workspaceOracle ? oracle : solver));
}

export interface CollectOptions {
  split: Split;
  /** Dataset seeds (from the split's base) and samples per seed. */
  seeds: number;
  samplesPerSeed: number;
  errorRate: number;
  /** The oracle's seed; each dataset seed's run adds its own, so mistakes differ from seed to seed. */
  oracleSeed: number;
  environments: EnvironmentLookup;
  /** Tasks this split must not contain (the held-out ones, when collecting the training split). */
  excludeTasks?: ReadonlySet<string>;
  /**
   * A model whose own turns, `rate` of them (drawn per sample and turn), take the oracle's place (`learnerMixPolicy`):
   * the oracle then acts from the states the model reaches. Its turns are never learned.
   */
  learner?: { generation: GenerationInterface; rate: number };
  /** The tokenizer whose ids the episodes hold (a trained vocabulary with merges); default the byte-level one. */
  tokenizer?: TokenizerInterface;
  /** The share of the training split's episodes whose task file is renamed, in plans that have `renames` (`rename.ts`). */
  renameRate?: number;
  /** Renamed files get only names as many tokens long as the name they replace (`RenameOptions.sameTokenCount`). */
  renameSameTokens?: boolean;
  /** The workspace oracle's look-alike look-up, this many times as likely as each other mistake (`WorkspaceOracleOptions`). */
  lookAlikeWeight?: number;
  /** The workspace oracle's write_file with a path and no content, this many times as likely as each other mistake before a write (`WorkspaceOracleOptions`). */
  pathOnlyWriteWeight?: number;
  /** The workspace oracle's write_file calls name their content first (`WorkspaceOracleOptions`), in both splits: a format, not a mistake. */
  contentFirstWrites?: boolean;
  /** The workspace's planned calls after a look-up that found no such file say so in their think block first (`notFoundLine`), in both splits: a format. */
  notFoundThoughts?: boolean;
}

export interface Collected {
  episodes: TrainingEpisode[];
  /** Every task collected (before exclusion): the held-out split's become the training split's `excludeTasks`. */
  tasks: Set<string>;
  /** Training samples left out because their task is held out. */
  excluded: number;
  /** Training samples kept although their task is held out (plans held out by seed only). */
  heldOutTasksKept: number;
  /** Training episodes whose task file was renamed. */
  renamed: number;
  failed: number;
}

/** Those of `turns` the environment found malformed, judged as the policy-quality benchmark judges them. */
function malformedTurns(env: string, sample: JudgedSample, turns: ReadonlySet<number>): Set<number> {
  const verdicts = judgeTurns(env, sample);
  return new Set([...turns].filter((turn) => verdicts[turn] === "malformed"));
}

export async function collectEpisodes(plan: EnvironmentPlan, options: CollectOptions): Promise<Collected> {
  const out: Collected = { episodes: [], tasks: new Set(), excluded: 0, heldOutTasksKept: 0, renamed: 0, failed: 0 };
  const tokenizer = options.tokenizer ?? byteLevelTokenizer;
  // The held-out split is the oracle's as the lab runs it, but for the calls' format, which is what the model learns to write.
  const format = options.contentFirstWrites ? { contentFirstWrites: true } : {};
  const solvers = trainingSolvers(
    options.split === "train" ? { lookAlikeWeight: options.lookAlikeWeight ?? 1, pathOnlyWriteWeight: options.pathOnlyWriteWeight ?? 0, ...format } : format,
  );
  for (const datasetSeed of splitSeeds(options.split, options.seeds)) {
    const oracle = { seed: options.oracleSeed + datasetSeed, errorRate: options.errorRate };
    const scenario = parseScenario(planScenario(plan, datasetSeed, options.samplesPerSeed, oracle));
    const { data } = await prepareScenario(scenario, options.environments);
    const labelled = labelledOraclePolicy(tokenizer, { ...oracle, solvers, thoughts: plan.thoughts, notFoundThoughts: options.notFoundThoughts ?? false });
    const mix = options.learner
      ? learnerMixPolicy(labelled.policy, options.learner.generation, { rate: options.learner.rate, seed: oracle.seed, padTokenId: tokenizer.padTokenId })
      : null;
    const result = await runScenario(scenario, {
      environments: options.environments,
      policyOverride: { generation: mix?.policy ?? labelled.policy, tokenizer },
    });
    // Samples come back in input order, so position i is datum i and the policy's batch position i.
    result.samples.forEach((sample, position) => {
      const datum = data[position]!;
      const task = JSON.stringify([datum.message_log ?? datum.messages, datum.extra_env_info ?? null]);
      out.tasks.add(task);
      if (sample.error !== undefined) out.failed++;
      else if (options.excludeTasks?.has(task) && plan.heldOutBy !== "seed") out.excluded++;
      else {
        if (options.excludeTasks?.has(task)) out.heldOutTasksKept++;
        const where = { env: plan.env, split: options.split, dataset_seed: datasetSeed };
        const learnerTurns = mix?.learnerTurns.get(position) ?? new Set<number>();
        const learnerSlips = learnerTurns.size > 0 ? malformedTurns(plan.env, sample, learnerTurns) : new Set<number>();
        // The oracle was not asked on the learner's turns, so no turn is both.
        const episode = episodeFromSample(sample, labelled.mistakes.get(position) ?? new Set(), where, learnerTurns, learnerSlips);
        // The held-out split stays as the environment wrote it: the benchmark's names are its names.
        const rename = plan.renames && options.split === "train" && (options.renameRate ?? 0) > 0
          ? renameTaskFile(episode, plan.renames, tokenizer, { rate: options.renameRate!, seed: oracle.seed, ...(options.renameSameTokens ? { sameTokenCount: true } : {}) })
          : null;
        if (rename?.renamed) out.renamed++;
        out.episodes.push(rename?.episode ?? episode);
      }
    });
  }
  return out;
}

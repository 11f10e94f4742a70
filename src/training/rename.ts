/**
 * Renaming the task's file in a training episode, a data augmentation. The workspace names its config file one of
 * three names and its log one of three, so a model can score a third of the time at those tokens without reading
 * the task at all, and builtin:trained did exactly that: with the task's name swapped for a sibling, its prediction
 * of the name in its own call did not move (docs/training.md, section 6). Renamed to names it cannot guess, the
 * only way to predict the file is to copy it from the task.
 *
 * The rename works on token ids: every occurrence of the file's path piece (`workspace`, `/service`, `.ini` as the
 * tokenizer splits them) in the prompt, the calls and the environment's answers gets the new name's tokens between
 * the same neighbours, so the episode stays one consistent transcript; its mask marks follow the replaced token.
 */

import { Rng, type TokenizerInterface } from "../core/index.js";
import type { TrainingEpisode } from "./episode.js";

/** A file whose name the task gives: `<before>/<name><after>`, one of `names` (e.g. `workspace` `/service` `.ini`). */
export interface RenamedFile {
  before: string;
  names: readonly string[];
  after: string;
}

export interface RenameOptions {
  /** The share of training episodes whose task file is renamed (drawn per episode). */
  rate: number;
  seed: number;
  /**
   * Give only a name as many tokens long as the one it replaces, from `pool` and `tokenPool` together. With the
   * recipe's merges the environment's names are one token each, most of `pool`'s several (`/`, `pay`, `ments`), so a
   * renamed call's first name token is mostly a `/` any model predicts and the copy is spread over tokens whose keys
   * (`/`, `pay`) recur all over the prompt: not the one-token copy the real names ask for.
   */
  sameTokenCount?: boolean;
}

/** What the plan renames, and the names it may give (none of them a name the environment uses). */
export interface RenameRules {
  files: readonly RenamedFile[];
  pool: readonly string[];
  /** More names, given only with `sameTokenCount`: one token each in builtin:trained's vocabulary (rename.test.ts checks). */
  tokenPool?: readonly string[];
}

/** The episode with its task's file renamed (with probability `rate`), and the rename made; else as it was. */
export function renameTaskFile(
  episode: TrainingEpisode,
  rules: RenameRules,
  tokenizer: TokenizerInterface,
  options: RenameOptions,
): { episode: TrainingEpisode; renamed: { from: string; to: string } | null } {
  const rng = Rng.derive(options.seed, "rename", episode.env, episode.dataset_seed, episode.idx);
  if (rng.next() >= options.rate) return { episode, renamed: null };
  const encode = (text: string) => tokenizer.encode(text);
  // The first occurrence is the prompt's (the task names its file before anything refers to it).
  let first: { file: RenamedFile; name: string; at: number } | null = null;
  for (const file of rules.files) {
    for (const name of file.names) {
      const at = indexOf(episode.ids, [...encode(file.before), ...encode(`/${name}`), ...encode(file.after)]);
      if (at >= 0 && (first === null || at < first.at)) first = { file, name, at };
    }
  }
  if (first === null) return { episode, renamed: null };
  const from = encode(`/${first.name}`);
  let pool = (options.sameTokenCount ? [...rules.pool, ...(rules.tokenPool ?? [])] : rules.pool).filter((n) => !first!.file.names.includes(n));
  if (options.sameTokenCount) {
    pool = pool.filter((n) => encode(`/${n}`).length === from.length);
    if (pool.length === 0) {
      throw new RangeError(`rename: no name of the pool is ${from.length} token${from.length === 1 ? "" : "s"} long in this vocabulary, as '/${first.name}' is (${episode.env} episode ${episode.idx}, dataset seed ${episode.dataset_seed})`);
    }
  }
  const to = rng.choice(pool);
  const before = encode(first.file.before);
  const after = encode(first.file.after);
  const replacement = encode(`/${to}`);
  const pattern = [...before, ...from, ...after];
  const ids: number[] = [];
  let mask = "";
  for (let i = 0; i < episode.ids.length; ) {
    if (startsWith(episode.ids, pattern, i)) {
      const nameMark = episode.mask[i + before.length]!;
      ids.push(...before, ...replacement, ...after);
      mask += episode.mask.slice(i, i + before.length) + nameMark.repeat(replacement.length) + episode.mask.slice(i + before.length + from.length, i + pattern.length);
      i += pattern.length;
    } else {
      ids.push(episode.ids[i]!);
      mask += episode.mask[i]!;
      i++;
    }
  }
  const name = `${first.file.before}/${first.name}${first.file.after}`;
  return { episode: { ...episode, ids, mask }, renamed: { from: name, to: `${first.file.before}/${to}${first.file.after}` } };
}

function startsWith(ids: readonly number[], pattern: readonly number[], at: number): boolean {
  if (at + pattern.length > ids.length) return false;
  for (let j = 0; j < pattern.length; j++) if (ids[at + j] !== pattern[j]) return false;
  return true;
}

function indexOf(ids: readonly number[], pattern: readonly number[]): number {
  for (let i = 0; i + pattern.length <= ids.length; i++) if (startsWith(ids, pattern, i)) return i;
  return -1;
}

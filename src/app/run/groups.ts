/**
 * GRPO groups (issue 19 item 3): the samples of one prompt, whose rewards' spread is what a group-relative advantage
 * is made of. A group with zero reward variance carries no gradient. The group of a sample is the dump's own id where
 * it has one (verl's `uid`, or its prompt's part, `prompt_uid`, where the uid is one rollout's, NeMo Gym's `_ng_task_index`, verifiers' `example_id`, a `group`/`group_id` field), else
 * its prompt: the text of its prompt messages, identical prompts together.
 */

import type { SampleView } from "./run-model.js";

/** Imported fields that name a sample's group, in the order they are looked for. */
export const GROUP_FIELDS = ["group_id", "group", "prompt_uid", "uid", "_ng_task_index", "example_id", "prompt_id"] as const;

export interface SampleGroup {
  key: string;
  /** What the key is: a dump's field, or the prompt. */
  by: string;
  /** Sample numbers, in order. */
  samples: number[];
  meanReward: number;
  /** The rewards' population standard deviation (what GRPO divides by). */
  std: number;
  min: number;
  max: number;
  /** Of more than one sample, every one finished, all with one reward: no gradient (unknown while any runs). */
  zeroVariance: boolean;
}

export interface RunGroups {
  groups: SampleGroup[];
  /** A sample's group, by sample number. */
  of: Map<number, SampleGroup>;
  /** Groups of more than one sample, all finished, whose rewards are all equal. */
  zeroVariance: number;
}

function importedFields(batch: Record<string, unknown[]> | null | undefined, sample: number): Record<string, unknown> | null {
  const entry = batch?.imported?.[sample] as { fields?: unknown } | null | undefined;
  return entry && typeof entry.fields === "object" && entry.fields !== null ? (entry.fields as Record<string, unknown>) : null;
}

/** A sample's group key and what it is. */
export function groupKeyOf(sample: SampleView, batch?: Record<string, unknown[]> | null): { key: string; by: string } {
  const fields = importedFields(batch, sample.sample);
  if (fields) {
    for (const name of GROUP_FIELDS) {
      const v = fields[name];
      if (typeof v === "string" || typeof v === "number") return { key: `${name}=${v}`, by: name };
    }
  }
  const prompt = sample.messages.slice(0, Math.max(1, sample.promptMessages)).map((m) => m.content).join("\u0000");
  return { key: `prompt:${prompt}`, by: "prompt" };
}

/** The run's groups (finished samples and running alike), in the order of their first sample. */
export function runGroups(samples: readonly SampleView[], batch?: Record<string, unknown[]> | null): RunGroups {
  const byKey = new Map<string, { by: string; samples: number[] }>();
  for (const s of samples) {
    const { key, by } = groupKeyOf(s, batch);
    let g = byKey.get(key);
    if (!g) byKey.set(key, (g = { by, samples: [] }));
    g.samples.push(s.sample);
  }
  const groups: SampleGroup[] = [];
  const of = new Map<number, SampleGroup>();
  let zeroVariance = 0;
  for (const [key, g] of byKey) {
    const rewards = g.samples.map((n) => samples[n]!.totalReward);
    const mean = rewards.reduce((a, b) => a + b, 0) / rewards.length;
    const std = Math.sqrt(rewards.reduce((a, r) => a + (r - mean) ** 2, 0) / rewards.length);
    const min = Math.min(...rewards);
    const max = Math.max(...rewards);
    // A sample still under way has a reward so far, not its reward: the group's spread is not known yet.
    const finished = g.samples.every((n) => samples[n]!.state === "done");
    const group: SampleGroup = { key, by: g.by, samples: g.samples, meanReward: mean, std, min, max, zeroVariance: g.samples.length > 1 && finished && min === max };
    if (group.zeroVariance) zeroVariance++;
    groups.push(group);
    for (const n of g.samples) of.set(n, group);
  }
  return { groups, of, zeroVariance };
}

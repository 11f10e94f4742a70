/**
 * Paced: a user environment module (docs/environments.md) whose `step` takes a set time, the way an environment
 * that runs code, calls a tool or waits on a server does. `bench/page.ts` loads it into the lab through "Load a
 * module file" (it runs in its own Worker, like any user's module) and runs it with a scripted policy, so a live run
 * produces rollout events at a pace the benchmark chooses (target 4b: 200 events/s) instead of as fast as the CPU
 * goes. Plain JavaScript, no imports.
 *
 * Env config: `delay_ms` (a step's mean duration, default 500), `jitter` (0–1: each step takes delay_ms × (1 ± jitter),
 * seeded by the sample and turn, so async samples drift apart instead of stepping in lockstep; default 0.5).
 * Dataset config: none. A sample never ends by itself: `max_rollout_turns` ends it.
 */

/** A deterministic number in [0, 1) for a sample's turn (an integer hash). */
function unit(a, b) {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x632be5ab, 0xc2b2ae35);
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return ((h ^ (h >>> 16)) >>> 0) / 4294967296;
}

export default {
  name: "paced_env",
  title: "Paced (benchmark)",
  description: "Every step takes a set time (delay_ms ± jitter); answers 'ok'. For pacing a live run's events.",
  defaultTaskName: "paced",

  create(config) {
    const unknown = Object.keys(config).filter((k) => k !== "delay_ms" && k !== "jitter");
    if (unknown.length) throw new Error(`unknown key '${unknown[0]}' (expected: delay_ms, jitter)`);
    const delay = config.delay_ms ?? 500;
    const jitter = config.jitter ?? 0.5;
    if (typeof delay !== "number" || !(delay >= 0)) throw new Error(`delay_ms: expected a number ≥ 0, got ${JSON.stringify(delay)}`);
    if (typeof jitter !== "number" || !(jitter >= 0 && jitter <= 1)) throw new Error(`jitter: expected a number in [0, 1], got ${JSON.stringify(jitter)}`);
    return {
      async step(messageLogBatch, metadata) {
        const first = metadata[0] ?? { n: 0, turn: 0 };
        const ms = delay * (1 + jitter * (2 * unit(first.n, first.turn) - 1));
        await new Promise((resolve) => setTimeout(resolve, ms));
        return {
          observations: metadata.map((m) => ({ role: "environment", content: `<environment>ok (turn ${m.turn})</environment>\n` })),
          metadata: metadata.map((m) => ({ n: m.n, turn: m.turn + 1 })),
          next_stop_strings: null,
          rewards: metadata.map(() => 0),
          terminateds: metadata.map(() => false),
          answers: null,
        };
      },
    };
  },

  generateDataset({ size, config, taskName }) {
    const unknown = Object.keys(config);
    if (unknown.length) throw new Error(`unknown key '${unknown[0]}' (expected none)`);
    return Array.from({ length: size }, (_, n) => ({
      task_name: taskName,
      idx: n,
      message_log: [{ role: "user", content: `<|im_start|>user\nSample ${n}: say something.<|im_end|>\n<|im_start|>assistant\n` }],
      extra_env_info: { n, turn: 0 },
      stop_strings: null,
    }));
  },
};

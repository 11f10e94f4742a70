/**
 * Number guess: the starter environment. Copy this file, rename it, and make it yours: every `.js` module in
 * `environments/` appears in the lab (hot-reloaded while `npm run dev` runs) and in `npm run rollout`/`regress`;
 * the lab can also load such a file at run time ("Load an environment module"). The contract is
 * `docs/environments.md`: a default export with `name`, `create(config)` → `{ step(messageLogBatch, metadata) }`,
 * `generateDataset(request)` and an optional `view(metadata)`. Plain JavaScript, no imports, so the same file
 * runs in Node, in the lab's environment Worker and from a picked file.
 *
 * The game: the environment holds a secret integer in [1, max_number]; the model answers `<guess>N</guess>`;
 * the environment says "higher", "lower" or "correct". Reward 1 for the correct guess, 0 otherwise; the episode
 * ends on the correct guess or after `max_guesses` guesses. `environments/remote/number_guess_server.py` serves
 * the same game over HTTP, turn for turn.
 */

const STOP = ["</guess>"];

/** A small seeded generator (mulberry32), so the same dataset seed gives the same secrets everywhere. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function setting(config, key, fallback) {
  const value = config[key] ?? fallback;
  if (!Number.isInteger(value) || value < 1) throw new Error(`${key}: expected a positive integer, got ${JSON.stringify(value)}`);
  return value;
}

/** One sample's turn: read the last assistant message, answer, update the state. */
function turn(log, state) {
  const last = log[log.length - 1];
  const text = last && last.role === "assistant" ? last.content : "";
  const match = /<guess>\s*(-?\d+)\s*<\/guess>/.exec(text);
  const guesses = match ? [...state.guesses, Number(match[1])] : state.guesses;
  const next = { ...state, guesses };
  const out = (text, reward, terminated) => ({
    observation: { role: "environment", content: `<environment>${text}</environment>\n` },
    reward,
    terminated,
    metadata: terminated ? null : next,
  });
  if (!match) return out("Answer with <guess>N</guess>.", 0, guesses.length >= state.max_guesses);
  const guess = Number(match[1]);
  if (guess === state.secret) return out(`correct: ${guess}`, 1, true);
  const hint = guess < state.secret ? "higher" : "lower";
  const left = state.max_guesses - guesses.length;
  return out(left > 0 ? `${hint} (${left} guess${left === 1 ? "" : "es"} left)` : `${hint}; no guesses left`, 0, left <= 0);
}

/** @type {import("../src/envs/types.js").EnvironmentDefinition} */
export default {
  name: "number_guess",
  title: "Number guess (starter)",
  description: "Guess the secret number in as few tries as possible: <guess>N</guess>, answered with higher/lower.",
  defaultTaskName: "number_guess",

  create(config) {
    const unknown = Object.keys(config).filter((k) => k !== "strict");
    if (unknown.length) throw new Error(`unknown key '${unknown[0]}' (expected: strict)`);
    return {
      step(messageLogBatch, metadata) {
        const turns = messageLogBatch.map((log, i) => turn(log, metadata[i]));
        return {
          observations: turns.map((t) => t.observation),
          metadata: turns.map((t) => t.metadata),
          next_stop_strings: turns.map(() => STOP),
          rewards: turns.map((t) => t.reward),
          terminateds: turns.map((t) => t.terminated),
          answers: null,
        };
      },
    };
  },

  generateDataset({ size, seed, config, taskName }) {
    const unknown = Object.keys(config).filter((k) => k !== "max_number" && k !== "max_guesses");
    if (unknown.length) throw new Error(`unknown key '${unknown[0]}' (expected: max_number, max_guesses)`);
    const maxNumber = setting(config, "max_number", 20);
    const maxGuesses = setting(config, "max_guesses", 5);
    const next = random(seed);
    return Array.from({ length: size }, (_, idx) => ({
      task_name: taskName,
      idx,
      message_log: [
        {
          role: "user",
          content: `<|im_start|>user\nI am thinking of a number from 1 to ${maxNumber}. Guess it: answer <guess>N</guess>. You have ${maxGuesses} guesses.<|im_end|>\n<|im_start|>assistant\n`,
        },
      ],
      extra_env_info: { secret: 1 + Math.floor(next() * maxNumber), max_number: maxNumber, max_guesses: maxGuesses, guesses: [] },
      stop_strings: STOP,
    }));
  },

  view(metadata) {
    if (!metadata) return { kind: "text", title: "Number guess", text: "The episode has ended." };
    return {
      kind: "steps",
      title: "Number guess",
      problem: `secret in 1..${metadata.max_number}`,
      steps: metadata.guesses.map((g, i) => ({ label: `guess ${i + 1}`, value: `${g} (${g === metadata.secret ? "correct" : g < metadata.secret ? "higher" : "lower"})` })),
      caption: `${metadata.max_guesses - metadata.guesses.length} guesses left · secret ${metadata.secret}`,
    };
  },
};

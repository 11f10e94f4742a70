/**
 * The word game of `word_game.py` beside it, as a lab environment module (docs/environments.md): the same words
 * from the same seed, the same marks and texts, so a scenario gives the same transcript through the Python bridge and
 * through this module (src/envs/http/python-bridge.test.ts checks it). Load it with "Load an environment module",
 * or `npm run rollout -- --environments docs/examples/word_game …`.
 */

const WORDS = [
  "cigar", "rebut", "sissy", "humph", "awake", "blush", "focal", "evade", "naval", "serve",
  "heath", "dwarf", "model", "karma", "stink", "grade", "quiet", "bench", "abate", "feign",
];
const STOP = ["</guess>"];

/** G / Y / _ for each letter of `guess`; a letter is marked Y no more often than `secret` has it unplaced. */
function marks(guess, secret) {
  const out = ["_", "_", "_", "_", "_"];
  const left = new Map();
  for (let i = 0; i < 5; i++) {
    if (guess[i] === secret[i]) out[i] = "G";
    else left.set(secret[i], (left.get(secret[i]) ?? 0) + 1);
  }
  for (let i = 0; i < 5; i++) {
    if (out[i] !== "G" && (left.get(guess[i]) ?? 0) > 0) {
      out[i] = "Y";
      left.set(guess[i], left.get(guess[i]) - 1);
    }
  }
  return out.join(" ");
}

const prompt = (maxGuesses) =>
  "<|im_start|>user\nGuess the secret five-letter word. Answer with <guess>word</guess>. Each guess is marked " +
  "letter by letter: G the right letter in the right place, Y in the word elsewhere, _ not in the word. " +
  `You have ${maxGuesses} guesses.<|im_end|>\n<|im_start|>assistant\n`;

function turn(log, state) {
  const last = log[log.length - 1];
  const text = last && last.role === "assistant" ? last.content : "";
  const start = text.indexOf("<guess>");
  const end = start >= 0 ? text.indexOf("</guess>", start + 7) : -1;
  const guess = end >= 0 ? text.slice(start + 7, end).replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, "").toLowerCase() : "";
  if (!/^[a-z]{5}$/.test(guess)) return ["Answer with <guess>word</guess>: five letters.", 0, state.guesses.length >= state.max_guesses, state];
  const guesses = [...state.guesses, guess];
  const next = { ...state, guesses };
  if (guess === state.secret) return [`${guess}: G G G G G, solved in ${guesses.length}`, 1, true, next];
  const left = state.max_guesses - guesses.length;
  const tail = left > 0 ? `${left} guess${left === 1 ? "" : "es"} left` : `no guesses left; it was ${state.secret}`;
  return [`${guess}: ${marks(guess, state.secret)} (${tail})`, 0, left <= 0, next];
}

/** @type {import("../../../src/envs/types.js").EnvironmentDefinition} */
export default {
  name: "word_game",
  title: "Word game",
  description: "Guess the secret five-letter word: each <guess>word</guess> is marked G / Y / _ letter by letter.",
  defaultTaskName: "word_game",
  create() {
    return {
      step(messageLogBatch, metadata) {
        const steps = messageLogBatch.map((log, i) => turn(log, metadata[i]));
        return {
          observations: steps.map(([text]) => ({ role: "environment", content: `<environment>${text}</environment>\n` })),
          metadata: steps.map(([, , done, state]) => (done ? null : state)),
          next_stop_strings: steps.map(([, , done]) => (done ? null : STOP)),
          rewards: steps.map(([, reward]) => reward),
          terminateds: steps.map(([, , done]) => done),
          answers: null,
        };
      },
    };
  },
  generateDataset({ size, seed, config, taskName }) {
    const maxGuesses = config.max_guesses ?? 6;
    return Array.from({ length: size }, (_, i) => ({
      task_name: taskName,
      message_log: [{ role: "user", content: prompt(maxGuesses) }],
      extra_env_info: { secret: WORDS[(seed * 7 + i * 3) % WORDS.length], guesses: [], max_guesses: maxGuesses },
      stop_strings: STOP,
    }));
  },
};

/** The number guess's random action: a guess uniform in the range the prompt states. */

import type { OracleSolver } from "../oracle/types.js";

const PROMPT_RE = /I am thinking of a number from 1 to (\d+)\. Guess it/;

export const randomNumberGuessSolver: OracleSolver = {
  env: "number_guess",
  matches: (text) => PROMPT_RE.test(text),
  respond: ({ promptText, rng }) => {
    const n = Number(PROMPT_RE.exec(promptText)?.[1]);
    if (!Number.isInteger(n) || n < 1) throw new Error("random-action number guess: the prompt does not state the range ('from 1 to N')");
    return `<guess>${rng.int(1, n)}</guess>`;
  },
};

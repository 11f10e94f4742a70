/**
 * The scripted policy: `responses[i][k]` is the k-th generation of the sample at batch position i, cut at the
 * sample's stop strings the way an engine would (see text-policy.ts). A sample asking for a response the script
 * does not have fails with a generation error; the other samples go on.
 */

import type { TokenizerInterface } from "../core/index.js";
import { TextPolicy } from "./text-policy.js";

export function scriptedPolicy(responses: readonly (readonly string[])[], tokenizer: TokenizerInterface): TextPolicy {
  return new TextPolicy(tokenizer, ({ sampleId, turn }) => {
    const script = responses[sampleId];
    if (!script) return new Error(`the script has no responses for sample ${sampleId}`);
    const text = script[turn];
    if (text === undefined) {
      return new Error(`the script has ${script.length} response(s) for sample ${sampleId}; turn ${turn + 1} asked for another`);
    }
    return text;
  });
}

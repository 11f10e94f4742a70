/**
 * The JSON text of a run's result, written once per result: the rollout worker writes it beside the result it sends
 * (off the page's main thread), and anything else is written on first use and kept.
 */

import type { RolloutResultJson } from "../../scenario/result.js";

const texts = new WeakMap<RolloutResultJson, string>();

export function setResultText(result: RolloutResultJson, text: string): void {
  texts.set(result, text);
}

export function resultText(result: RolloutResultJson | null): string {
  if (!result) return "null";
  let text = texts.get(result);
  if (text === undefined) {
    text = JSON.stringify(result);
    texts.set(result, text);
  }
  return text;
}

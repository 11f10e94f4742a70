/**
 * The Hermes `<tool_call>` extractor (fork-additions.md §2), with vLLM's all-or-nothing parity:
 * one undecodable call discards the whole turn's calls.
 */

import { parseJsonKeepingOrder } from "../python/ordered-json.js";
import { pyJsonDumps } from "../python/repr.js";

export const HERMES_TOOL_CALL_START = "<tool_call>";
export const HERMES_TOOL_CALL_END = "</tool_call>";
export const JSON_DECODE_ERROR_PREFIX = "tool-call JSON decode error: ";
export const MISSING_NAME_OR_ARGUMENTS_PREFIX = "tool-call missing/invalid name or arguments: ";

const TOOL_CALL_REGEX = /<tool_call>([\s\S]*?)<\/tool_call>|<tool_call>([\s\S]*)/g;

export interface ParsedToolCall {
  name: unknown;
  arguments: unknown;
  /** Python `json.dumps(arguments, ensure_ascii=False)`. */
  arguments_json: string;
}

export interface HermesExtraction {
  tools_called: boolean;
  tool_calls: ParsedToolCall[];
  /** Text before the first call on success; the whole text when nothing (valid) was called. */
  content: string | null;
  error: string | null;
  /** A call was made or tried: `tools_called || error !== null`. */
  attempted: boolean;
  /** Where each call region starts and ends in the text (for highlighting), in order. */
  regions: { start: number; end: number; closed: boolean; body: string }[];
}

export function parseHermesToolCalls(text: string): HermesExtraction {
  if (!text.includes(HERMES_TOOL_CALL_START)) return extraction(false, [], text, null, []);
  const regions = [...text.matchAll(TOOL_CALL_REGEX)].map((m) => ({
    start: m.index,
    end: m.index + m[0].length,
    closed: m[1] !== undefined,
    // Python's findall gives "" for the unmatched group: the closed body when non-empty, else the trailing one.
    body: m[1] || m[2] || "",
  }));
  // Every region is decoded before any is read (the reference's two comprehensions): a decode error anywhere is the
  // error, even after a call that lacks its name.
  const decodedCalls: unknown[] = [];
  for (const region of regions) {
    try {
      // Each object's keys kept in the order written: `arguments_json` re-serialises them in it, as Python does.
      decodedCalls.push(parseJsonKeepingOrder(region.body));
    } catch (e) {
      if (e instanceof RangeError) return extraction(false, [], text, `${JSON_DECODE_ERROR_PREFIX}maximum recursion depth exceeded while decoding a JSON object`, regions);
      return extraction(false, [], text, JSON_DECODE_ERROR_PREFIX + (e as Error).message, regions);
    }
  }
  const calls: ParsedToolCall[] = [];
  for (const decoded of decodedCalls) {
    const failure = subscriptFailure(decoded, "name") ?? subscriptFailure(decoded, "arguments");
    if (failure) return extraction(false, [], text, MISSING_NAME_OR_ARGUMENTS_PREFIX + failure, regions);
    const call = decoded as { name: unknown; arguments: unknown };
    let argumentsJson: string;
    try {
      argumentsJson = pyJsonDumps(call.arguments);
    } catch (e) {
      // Python's json gives up on deep nesting with a RecursionError, which the reference does not catch (its
      // rollout would crash); the port reports it as this call's decode error, so one bad reply fails one turn.
      if (!(e instanceof RangeError)) throw e;
      return extraction(false, [], text, `${JSON_DECODE_ERROR_PREFIX}maximum recursion depth exceeded while decoding a JSON object`, regions);
    }
    calls.push({ name: call.name, arguments: call.arguments, arguments_json: argumentsJson });
  }
  const leading = text.slice(0, text.indexOf(HERMES_TOOL_CALL_START));
  return extraction(true, calls, leading === "" ? null : leading, null, regions);
}

/** What Python's `value[key]` raises (KeyError/TypeError text), or null when it succeeds. */
function subscriptFailure(value: unknown, key: string): string | null {
  if (value === null) return "'NoneType' object is not subscriptable";
  if (Array.isArray(value)) return "list indices must be integers or slices, not str";
  if (typeof value === "string") return "string indices must be integers, not 'str'";
  if (typeof value === "boolean") return "'bool' object is not subscriptable";
  if (typeof value === "number") return `'${Number.isInteger(value) ? "int" : "float"}' object is not subscriptable`;
  if (!Object.prototype.hasOwnProperty.call(value, key)) return `'${key}'`;
  return null;
}

function extraction(
  toolsCalled: boolean,
  calls: ParsedToolCall[],
  content: string | null,
  error: string | null,
  regions: HermesExtraction["regions"],
): HermesExtraction {
  return { tools_called: toolsCalled, tool_calls: calls, content, error, attempted: toolsCalled || error !== null, regions };
}

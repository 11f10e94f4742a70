/**
 * The run's configuration in the URL: `#scenario=<base64url JSON>` (opening such a link loads it) and `&run=1`
 * (the link reproduces the run: it starts with the same seed; the page's src/app/link.ts asks first when it would reach
 * other hosts).
 *
 * Reading a link never throws: a link that is not base64url, not UTF-8 JSON, or nested deeper than
 * `MAX_LINK_DEPTH` gives an error that says what is wrong (a value nested thousands deep is valid JSON, but
 * `JSON.stringify`, structured cloning and recursive checks overflow the stack on it).
 */

import { MAX_JSON_DEPTH } from "../core/index.js";

/**
 * The longest link the Share button makes: 64 KiB (65,536 characters, the whole URL). Chromium refuses URLs over
 * 2 MiB (`url::kMaxURLChars`, 2,097,152 characters), other browsers and the apps links pass through (chat, mail,
 * issue trackers) cut them far shorter; a longer scenario is shared as a file (the scenario's JSON, or the run's
 * JSONL export, whose last line holds it).
 */
export const MAX_SHARE_LINK_LENGTH = 64 * 1024;

/** The deepest nesting of arrays and objects a link's scenario may have: every input's limit. */
export const MAX_LINK_DEPTH = MAX_JSON_DEPTH;

export function encodeScenario(scenario: unknown): string {
  const bytes = new TextEncoder().encode(JSON.stringify(scenario));
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The JSON text a link's `scenario` parameter carries (throws when it is not base64url of UTF-8). */
export function decodeScenarioText(encoded: string): string {
  const base64 = encoded.replace(/-/g, "+").replace(/_/g, "/");
  let binary: string;
  try {
    binary = atob(base64 + "=".repeat((4 - (base64.length % 4)) % 4));
  } catch {
    throw new Error("it is not base64url text");
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
  } catch {
    throw new Error("it is not UTF-8 text");
  }
}

export function decodeScenario(encoded: string): unknown {
  return JSON.parse(decodeScenarioText(encoded));
}

export function shareHash(scenario: unknown, autorun: boolean): string {
  return `#scenario=${encodeScenario(scenario)}${autorun ? "&run=1" : ""}`;
}

/**
 * How deep `text` (JSON, or text that fails to be JSON later) nests arrays and objects, when deeper than `limit`:
 * the deepest level, and the path to the first value past the limit (`envs.t.config.x[0][0]…`). Null within the
 * limit. One pass over the text, no recursion (any depth is fine), strings and their escapes skipped.
 */
export function nestingBeyond(text: string, limit: number): { depth: number; path: string } | null {
  type Frame = { object: boolean; key: string | null; index: number; expectKey: boolean };
  const stack: Frame[] = [];
  let max = 0;
  let path: string | null = null;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string: to its closing quote (an escaped quote does not close it).
      const start = i;
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
      const top = stack[stack.length - 1];
      if (top?.object && top.expectKey) {
        let key: string;
        try {
          key = JSON.parse(text.slice(start, i + 1)) as string;
        } catch {
          key = text.slice(start + 1, i);
        }
        top.key = key;
        top.expectKey = false;
      }
    } else if (c === 0x7b || c === 0x5b) {
      stack.push({ object: c === 0x7b, key: null, index: 0, expectKey: c === 0x7b });
      if (stack.length > max) max = stack.length;
      if (path === null && stack.length > limit) path = pathOf(stack);
    } else if (c === 0x7d || c === 0x5d) {
      stack.pop();
    } else if (c === 0x2c) {
      const top = stack[stack.length - 1];
      if (top?.object) top.expectKey = true;
      else if (top) top.index++;
    }
  }
  return path === null ? null : { depth: max, path };
}

/** The path of the container on top of `stack` (each frame's key or index leads to the next), shortened. */
function pathOf(stack: readonly { object: boolean; key: string | null; index: number }[]): string {
  const shown = 12;
  let out = "";
  for (let i = 0; i < Math.min(stack.length - 1, shown); i++) {
    const f = stack[i]!;
    out += f.object ? `${out ? "." : ""}${f.key ?? "?"}` : `[${f.index}]`;
  }
  if (stack.length - 1 > shown) out += "…";
  return out || "(the top level)";
}

export type LinkRead = { scenario: unknown; autorun: boolean } | { error: string; autorun: boolean };

/**
 * The scenario and autorun flag of a location hash, or null (no `scenario=` in it); a link that cannot be read gives
 * an error that says what is wrong instead. Never throws.
 */
export function readHash(hash: string): LinkRead | null {
  let params: URLSearchParams;
  try {
    params = new URLSearchParams(hash.replace(/^#/, ""));
  } catch {
    return null;
  }
  const encoded = params.get("scenario");
  if (encoded === null) return null;
  const autorun = params.get("run") === "1";
  const fail = (why: string) => ({ error: `the link's scenario cannot be read: ${why}`, autorun });
  if (!encoded) return fail("it is empty");
  let text: string;
  try {
    text = decodeScenarioText(encoded);
  } catch (e) {
    return fail((e as Error).message);
  }
  const deep = nestingBeyond(text, MAX_LINK_DEPTH);
  if (deep) {
    return fail(`it nests arrays and objects ${deep.depth.toLocaleString("en")} levels deep (at ${deep.path}), more than the ${MAX_LINK_DEPTH} a scenario may have`);
  }
  try {
    return { scenario: JSON.parse(text), autorun };
  } catch (e) {
    return fail(`it is not JSON (${(e as Error).message})`);
  }
}

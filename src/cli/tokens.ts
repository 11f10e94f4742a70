/**
 * `npm run tokens -- check <result.json | export.jsonl> [--tokenizer <model>] [--scenario <scenario.json>] [--json]`:
 * the token consistency check (src/scenario/token-check.ts) over every sample of a saved run. Exit 0 when every
 * sample is consistent, 1 when any drifts, 2 on bad usage or input (the message names the file, line and field).
 *
 * The tokenizer: `--tokenizer` (a local folder with tokenizer.json and tokenizer_config.json, `builtin:tiny`,
 * `builtin:small`, `builtin:tiny-qwen3`, `builtin:byte-level`), else the scenario's `tokenizer` key, else its model
 * policy's model, else the byte-level tokenizer with its ChatML template. The scenario is the export's last line's, or
 * `--scenario`'s (a result JSON does not carry one); it also says whether the run was structured and gives the raw
 * `messages`/`tools` of explicit samples. Without a scenario a run counts as structured when an observation's tokens
 * hold a `<tool_response>` its content does not.
 */

import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { byteLevelTokenizer, renderChatTemplate, type Message } from "../core/index.js";
import { loadCheckTokenizer, tokenizerSource, type TokenizerSource } from "../policy/llm/tokenizer-load.js";
import { checkValue, formatProblem, JsonlAccumulator, sampleLineSchema, type SampleLine } from "../scenario/jsonl-reader.js";
import { checkSample, reportOf, REASON_TEXT, tokenizerSpecOf, type CheckResult, type CheckTokenizer, type TemplateMessage } from "../scenario/token-check.js";
import { isEntryPoint } from "./entry.js";
import { withGuardedStdout } from "./output-file.js";
import { hubEndpoint } from "./hub-endpoint.js";

const USAGE = "usage: npm run tokens -- check <result.json | export.jsonl> [--tokenizer <model>] [--scenario <scenario.json>] [--json]";

/** Bad usage or input: exit 2 with this message. */
class InputError extends Error {}

interface Args {
  file: string;
  tokenizer?: string;
  scenario?: string;
  json: boolean;
}

function parseArgs(argv: string[]): Args | null {
  const positional: string[] = [];
  const args: Partial<Args> = { json: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--help" || arg === "-h") return null;
    if (arg === "--json") args.json = true;
    else if (arg === "--tokenizer" || arg === "--scenario") {
      const value = argv[++i];
      if (!value) throw new InputError(`${arg} needs a value`);
      if (arg === "--tokenizer") args.tokenizer = value;
      else args.scenario = value;
    } else if (arg.startsWith("-")) throw new InputError(`unknown option ${arg}`);
    else positional.push(arg);
  }
  if (positional[0] !== "check") throw new InputError(positional.length ? `unknown command '${positional[0]}' (expected check)` : "expected the command check");
  if (positional.length !== 2) throw new InputError("check takes exactly one file (a result JSON or a JSONL export)");
  return { ...args, file: positional[1]! } as Args;
}

interface SavedRun {
  samples: SampleLine[];
  scenario: Record<string, unknown> | null;
}

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);

/** A result JSON (`{"samples": […]}`) or a JSONL export, every sample checked; problems name the file, line and field. */
export function readSavedRun(text: string, file: string): SavedRun {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  let whole: unknown;
  let isJson = true;
  try {
    whole = JSON.parse(body);
  } catch {
    isJson = false;
  }
  if (isJson && isObject(whole) && Object.hasOwn(whole, "samples")) {
    if (!Array.isArray(whole.samples)) throw new InputError(`${file}: samples: expected a list of samples`);
    const problems: string[] = [];
    const samples: SampleLine[] = [];
    whole.samples.forEach((s, i) => {
      const checked = checkValue(sampleLineSchema, s, 3);
      if (checked.ok) samples.push(checked.value as SampleLine);
      else problems.push(...checked.problems.map((p) => `${file}: samples[${i}]${p.path ? `${p.path.startsWith("[") ? "" : "."}${p.path}` : ""}: ${p.message}`));
    });
    if (problems.length) throw new InputError(problems.slice(0, 10).join("\n"));
    return { samples, scenario: isObject(whole.scenario) ? whole.scenario : null };
  }
  if (isJson && !isObject(whole)) throw new InputError(`${file}: expected a result JSON ({"samples": […]}) or a JSONL export`);
  const acc = new JsonlAccumulator({ maxProblems: 10 });
  acc.push(body);
  const read = acc.end();
  if (read.problemCount > 0) throw new InputError(read.problems.map((p) => `${file}: ${formatProblem(p)}`).join("\n"));
  const scenario = read.footer?.scenario;
  return { samples: read.samples, scenario: isObject(scenario) ? scenario : null };
}

/** The byte-level tokenizer with the lab's ChatML template. */
const byteLevel: CheckTokenizer = {
  encode: (text) => byteLevelTokenizer.encode(text),
  decode: (ids) => byteLevelTokenizer.decode(ids),
  tokenText: (id) => byteLevelTokenizer.tokenText(id),
  applyChatTemplate: (messages, options) => renderChatTemplate(messages, { tools: (options.tools ?? null) as never, addGenerationPrompt: options.addGenerationPrompt }),
  eosText: "<|im_end|>",
};

/** Which tokenizer, and where the choice came from (for the report). */
function tokenizerSpec(args: Args, scenario: Record<string, unknown> | null): { spec: string | null; from: string } {
  if (args.tokenizer) return { spec: args.tokenizer, from: "--tokenizer" };
  // The check's choice (as in the page), said with where it came from.
  const spec = tokenizerSpecOf(scenario);
  if (spec === null) return { spec: null, from: "default" };
  if (typeof scenario?.tokenizer === "string") return { spec, from: "the scenario's tokenizer" };
  return { spec, from: `the scenario's ${(scenario?.policy as { kind: string }).kind} policy` };
}

async function loadTokenizer(spec: string | null, from: string, base: string): Promise<{ tokenizer: CheckTokenizer; name: string }> {
  if (spec === null) return { tokenizer: byteLevel, name: "byte-level (ChatML)" };
  let source: TokenizerSource;
  try {
    // A relative folder named by a file is tried next to that file too.
    source = !spec.startsWith("builtin:") && !existsSync(spec) && existsSync(resolve(base, spec)) ? tokenizerSource(resolve(base, spec)) : tokenizerSource(spec);
  } catch (e) {
    throw new InputError(`${(e as Error).message} (from ${from})`);
  }
  if (source.kind === "byte-level") return { tokenizer: byteLevel, name: `${spec}: byte-level (ChatML)` };
  try {
    return { tokenizer: await loadCheckTokenizer(spec, source, hubEndpoint()), name: spec };
  } catch (e) {
    throw new InputError(`${(e as Error).message} (from ${from})`);
  }
}

/** The scenario's explicit datum with this idx (idx defaults to the position), if it gave raw messages. */
function rawMessagesOf(scenario: Record<string, unknown> | null, idx: number, where: string): { messages: TemplateMessage[]; tools: unknown[] | null } | null {
  const samples = scenario?.samples;
  if (!Array.isArray(samples)) return null;
  const k = samples.findIndex((d, i) => isObject(d) && (typeof d.idx === "number" ? d.idx : i) === idx);
  const datum = samples[k];
  if (!isObject(datum) || datum.messages === undefined) return null;
  const path = `${where}: scenario.samples[${k}]`;
  if (!Array.isArray(datum.messages)) throw new InputError(`${path}.messages: expected a list of {role, content} messages`);
  const messages = datum.messages.map((m, i) => {
    if (!isObject(m) || typeof m.role !== "string" || typeof m.content !== "string") throw new InputError(`${path}.messages[${i}]: expected a {role, content} message`);
    return { role: m.role, content: m.content };
  });
  if (datum.tools !== undefined && datum.tools !== null && !Array.isArray(datum.tools)) throw new InputError(`${path}.tools: expected a list of function specs`);
  return { messages, tools: (datum.tools as unknown[] | null | undefined) ?? null };
}

/** How many prompt messages the scenario's explicit datum of this idx gave as its `message_log`, if it did. */
function datumPromptCount(scenario: Record<string, unknown> | null, idx: number): number | null {
  const samples = scenario?.samples;
  if (!Array.isArray(samples)) return null;
  const datum: unknown = samples.find((d, i) => isObject(d) && (typeof d.idx === "number" ? d.idx : i) === idx);
  return isObject(datum) && Array.isArray(datum.message_log) ? datum.message_log.length : null;
}

/** Without a scenario: structured when an observation's tokens hold a tool-response envelope its content lacks. */
function looksStructured(samples: readonly SampleLine[], tokenizer: CheckTokenizer): boolean {
  return samples.some((s) => {
    const first = s.message_log.findIndex((m) => m.role === "assistant");
    return first >= 0 && s.message_log.slice(first).some((m) => m.role !== "assistant" && !m.content.includes("<tool_response>") && m.token_ids.length > 0 && tokenizer.decode(m.token_ids).includes("<tool_response>"));
  });
}

const show = (texts: readonly string[]) => texts.map((t) => JSON.stringify(t)).join(" ");

function humanReport(samples: readonly SampleLine[], results: readonly CheckResult[], name: string, structured: string): string {
  const lines: string[] = [];
  results.forEach((r, i) => {
    const s = samples[i]!;
    const d = r.first_divergence;
    if (!d) {
      lines.push(`sample ${i} (idx ${s.idx}): consistent`);
      return;
    }
    const role = s.message_log[d.message_index]?.role ?? "?";
    lines.push(
      `sample ${i} (idx ${s.idx}): drifts at token ${d.token_index} (message ${d.message_index}, ${role})${d.reason ? `: ${d.reason}, ${REASON_TEXT[d.reason]}` : ""}`,
      `    before:   ${show(r.before)}`,
      `    ours:     ${show(d.ours)}${d.ours.length ? "" : "(end)"}`,
      `    template: ${show(d.template)}${d.template.length ? "" : "(end)"}`,
    );
  });
  const drifting = results.filter((r) => !r.consistent);
  const reasons = new Map<string, number>();
  for (const r of drifting) reasons.set(r.first_divergence!.reason ?? "unnamed", (reasons.get(r.first_divergence!.reason ?? "unnamed") ?? 0) + 1);
  const why = [...reasons].map(([k, n]) => `${k} ${n}`).join(", ");
  lines.push(`${results.length} samples: ${results.length - drifting.length} consistent, ${drifting.length} drifting${why ? ` (${why})` : ""}; tokenizer ${name}; ${structured}`);
  return `${lines.join("\n")}\n`;
}

export async function main(argv: string[]): Promise<number> {
  try {
    const args = parseArgs(argv);
    if (!args) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    const text = await readFile(args.file, "utf8").catch((e: Error) => {
      throw new InputError(`cannot read ${args.file}: ${e.message}`);
    });
    const run = readSavedRun(text, args.file);
    let scenario = run.scenario;
    if (args.scenario) {
      const scenarioText = await readFile(args.scenario, "utf8").catch((e: Error) => {
        throw new InputError(`cannot read ${args.scenario}: ${e.message}`);
      });
      try {
        const parsed: unknown = JSON.parse(scenarioText);
        if (!isObject(parsed)) throw new Error("expected an object");
        scenario = parsed;
      } catch (e) {
        throw new InputError(`${args.scenario}: not a scenario JSON object: ${(e as Error).message}`);
      }
    }
    if (!run.samples.length) throw new InputError(`${args.file}: no samples`);
    const { spec, from } = tokenizerSpec(args, scenario);
    const { tokenizer, name } = await loadTokenizer(spec, from, dirname(resolve(args.scenario ?? args.file)));
    const structuredBlock = scenario?.structured;
    const structured = scenario ? isObject(structuredBlock) && structuredBlock.enabled === true : looksStructured(run.samples, tokenizer);
    const structuredNote = `${structured ? "structured" : "not structured"} (${scenario ? "the scenario's structured block" : "guessed from the observations' tokens"})`;
    const results = run.samples.map((s) => {
      const prompt = s["lab/prompt_messages"] ?? datumPromptCount(scenario, s.idx);
      return checkSample(
        {
          messageLog: s.message_log as Message[],
          structured,
          raw: rawMessagesOf(scenario, s.idx, args.scenario ?? args.file),
          ...(s.termination === "truncated_context" ? { cutShort: true } : {}),
          ...(typeof prompt === "number" ? { promptMessages: prompt } : {}),
        },
        tokenizer,
      );
    });
    if (args.json) {
      const report = reportOf(
        run.samples.map((s, i) => ({ idx: s.idx, result: results[i]! })),
        name,
      );
      process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    } else process.stdout.write(humanReport(run.samples, results, name, structuredNote));
    return results.every((r) => r.consistent) ? 0 : 1;
  } catch (e) {
    if (e instanceof InputError) {
      process.stderr.write(`error: ${e.message}\n${USAGE}\n`);
      return 2;
    }
    process.stderr.write(`error: ${(e as Error).message}\n`);
    return 2;
  }
}

// A report that cannot be written (a full disk) is a broken job (2), not drift (1).
if (isEntryPoint(import.meta.url)) process.exitCode = await withGuardedStdout(() => main(process.argv.slice(2)));

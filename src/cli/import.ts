/**
 * `rollout-lab import <dump…> [--format auto|lab|nemo-rl|nemo-gym|verl|verifiers|skyrl|trl] --out <export.jsonl>`: rollout dumps of
 * other RL libraries (src/scenario/imports/) converted to the lab's JSONL export, which the page imports and `npm run
 * tokens -- check` and the replay policy read. Files are streamed. Several files (a run's steps) make one run: their
 * samples are numbered in order and each keeps its file and original `idx` (`imported.fields.source`). Lines with
 * problems are named with their file and line; the other lines are still written, and the exit status is 1. Exit 2
 * on bad usage, or when the output cannot be written (what was at `--out` is then left as it was). A Parquet file (TRL's completions_{step}.parquet; found by its `PAR1` magic bytes) is read by row
 * groups (src/scenario/imports/parquet.ts), its rows checked as lines are, a row's problems named `line N` (row N).
 */

import { once } from "node:events";
import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import { basename } from "node:path";
import { exportFooterLine, exportSampleLine, buildRun } from "../app/run/jsonl.js";
import { asyncBufferFromFile } from "hyparquet";
import { FORMAT_NAMES } from "../scenario/imports/index.js";
import { isParquet, readParquetInto } from "../scenario/imports/parquet.js";
import { adoptSample } from "../scenario/imports/steps.js";
import { formatProblem, JsonlAccumulator, type SampleLine } from "../scenario/jsonl-reader.js";
import { isEntryPoint } from "./entry.js";
import { UsageError } from "./node-run.js";
import { pendingFile } from "./output-file.js";

const USAGE = `usage: rollout-lab import <dump.jsonl|completions_N.parquet…> [--format ${FORMAT_NAMES.join("|")}] --out <export.jsonl>`;

interface Args {
  files: string[];
  format: string;
  out: string;
}

function parseArgs(argv: string[]): Args {
  const files: string[] = [];
  let format = "auto";
  let out: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--out") {
      out = argv[++i];
      if (!out) throw new UsageError("--out needs a file path", USAGE);
    } else if (arg === "--format") {
      const name = argv[++i];
      if (!name || !(FORMAT_NAMES as readonly string[]).includes(name)) throw new UsageError(`--format needs one of ${FORMAT_NAMES.join(", ")}`, USAGE);
      format = name;
    } else if (arg === "--help" || arg === "-h") throw new UsageError(null, USAGE);
    else if (arg.startsWith("-")) throw new UsageError(`unknown option ${arg}`, USAGE);
    else files.push(arg);
  }
  if (files.length === 0) throw new UsageError("expected at least one dump file", USAGE);
  if (!out) throw new UsageError("--out is needed (the lab's JSONL export to write)", USAGE);
  return { files, format, out };
}

async function startsWithParquetMagic(file: string): Promise<boolean> {
  const handle = await open(file, "r");
  try {
    const head = new Uint8Array(4);
    const { bytesRead } = await handle.read(head, 0, 4, 0);
    return isParquet(head.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}

/** One file's samples and problems, streamed. */
async function readDump(file: string, format: string): Promise<{ samples: SampleLine[]; problems: string[]; problemCount: number }> {
  const acc = new JsonlAccumulator({ format, fileName: basename(file), maxProblems: 20 });
  if (await startsWithParquetMagic(file)) await readParquetInto(await asyncBufferFromFile(file), acc);
  else for await (const chunk of createReadStream(file)) acc.lines.pushBytes(chunk as Buffer);
  const read = acc.end();
  return { samples: read.samples, problems: read.problems.map((p) => `${file}: ${formatProblem(p)}`), problemCount: read.problemCount };
}

export async function main(argv: string[]): Promise<number> {
  let args: Args;
  try {
    args = parseArgs(argv);
  } catch (e) {
    const detail = (e as UsageError).detail;
    process.stderr.write(`${detail ? `error: ${detail}\n` : ""}${USAGE}\n`);
    return detail ? 2 : 0;
  }
  const samples: SampleLine[] = [];
  const problems: string[] = [];
  let problemCount = 0;
  for (const file of args.files) {
    let read;
    try {
      read = await readDump(file, args.format);
    } catch (e) {
      process.stderr.write(`error: cannot read ${file}: ${(e as Error).message}\n`);
      return 1;
    }
    problems.push(...read.problems);
    problemCount += read.problemCount;
    for (const s of read.samples) {
      // One run of several files: numbered in order, each sample keeping where it came from (as the page does).
      if (args.files.length > 1) adoptSample(s, basename(file), samples.length);
      samples.push(s);
    }
  }
  if (samples.length === 0) {
    process.stderr.write(`${problems.join("\n")}\nerror: no sample could be read${problemCount ? ` (${problemCount} problems)` : ""}\n`);
    return 1;
  }
  const { model } = buildRun({ samples, footer: null });
  // In place only once whole: a failed write or a kill leaves what was at --out as it was.
  const file = pendingFile(args.out);
  try {
    for (let i = 0; i < model.samples.length; i++) {
      if (!file.stream.write(`${exportSampleLine(model, i)}\n`)) await once(file.stream, "drain");
    }
    file.stream.write(`${exportFooterLine(model, null)}\n`);
    await file.commit();
  } catch (e) {
    await file.abandon();
    process.stderr.write(`error: cannot write ${args.out}: ${(e as Error).message}\n`);
    return 2;
  }
  process.stderr.write(`wrote ${samples.length} samples to ${args.out}\n`);
  if (problemCount) {
    process.stderr.write(`${problems.join("\n")}\n${problemCount} problem(s) in the input: those lines were left out\n`);
    return 1;
  }
  return 0;
}

if (isEntryPoint(import.meta.url)) process.exitCode = await main(process.argv.slice(2));

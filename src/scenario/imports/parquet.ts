/**
 * Parquet files (TRL's `completions_{step}.parquet`: ./trl.ts) read as records, one per row, with hyparquet, and fed
 * to the same checker as a JSONL file's lines (`JsonlAccumulator.pushRecord`): the page and `rollout-lab import` get
 * the same samples and problems from either. A row's problems name it as `line N`, N its 1-based row number. Rows
 * are read a row group at a time (what hyparquet decodes at once), so a file is never held whole as records.
 */

import { parquetMetadataAsync, parquetReadObjects, type AsyncBuffer } from "hyparquet";
import type { JsonlAccumulator } from "../jsonl-reader.js";

export type { AsyncBuffer } from "hyparquet";

/** Every Parquet file starts (and ends) with these 4 bytes. */
const MAGIC = [0x50, 0x41, 0x52, 0x31]; // "PAR1"

export function isParquet(head: Uint8Array): boolean {
  return head.length >= 4 && MAGIC.every((b, i) => head[i] === b);
}

/** A Blob (a File the user picked) as hyparquet's random-access buffer: only the ranges it asks for are read. */
export function blobAsyncBuffer(blob: Blob): AsyncBuffer {
  return { byteLength: blob.size, slice: (start, end) => blob.slice(start, end).arrayBuffer() };
}

/**
 * hyparquet's values as JSON values: INT64 comes as a BigInt (a number here, or its decimal string past 2^53), a
 * timestamp as a Date (its ISO text), bytes as a Uint8Array (a list of numbers); lists and structs recursively.
 */
export function toJsonValue(v: unknown): unknown {
  // JSON has no NaN: a NaN reward (a function that did not apply) is null, as a JSON writer writes it.
  if (typeof v === "number") return Number.isFinite(v) ? v : null;
  if (typeof v === "bigint") return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.toISOString();
  if (ArrayBuffer.isView(v)) return Array.from(v as unknown as ArrayLike<number | bigint>, toJsonValue);
  if (Array.isArray(v)) return v.map(toJsonValue);
  if (typeof v === "object" && v !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = toJsonValue(x);
    return out;
  }
  return v;
}

export interface ParquetReadProgress {
  rowsRead: number;
  totalRows: number;
}

/**
 * The rows of a Parquet `file` into `acc` (then `acc.end()` is the caller's). `afterGroup` runs after each row group's
 * rows were pushed (the page sends its samples then, and may wait there). A file hyparquet cannot read throws, its
 * message saying the file is no readable Parquet.
 */
export async function readParquetInto(
  file: AsyncBuffer,
  acc: Pick<JsonlAccumulator, "pushRecord" | "result">,
  afterGroup?: (progress: ParquetReadProgress) => void | Promise<void>,
): Promise<ParquetReadProgress> {
  let metadata;
  try {
    metadata = await parquetMetadataAsync(file);
  } catch (e) {
    throw new Error(`not a readable Parquet file (${(e as Error).message})`);
  }
  const totalRows = Number(metadata.num_rows);
  let rowStart = 0;
  if (metadata.row_groups.length === 0) acc.result.bytesRead = file.byteLength;
  for (const group of metadata.row_groups) {
    const rowEnd = rowStart + Number(group.num_rows);
    let rows;
    try {
      rows = await parquetReadObjects({ file, metadata, rowStart, rowEnd });
    } catch (e) {
      throw new Error(`Parquet rows ${rowStart + 1}–${rowEnd} cannot be read (${(e as Error).message})`);
    }
    for (let i = 0; i < rows.length; i++) acc.pushRecord(toJsonValue(rows[i]) as Record<string, unknown>, rowStart + i + 1);
    rowStart = rowEnd;
    // The bytes "read" for progress: the file's share of the rows done (hyparquet reads by ranges, not in order).
    acc.result.bytesRead = totalRows > 0 ? Math.round((file.byteLength * rowStart) / totalRows) : file.byteLength;
    await afterGroup?.({ rowsRead: rowStart, totalRows });
  }
  return { rowsRead: rowStart, totalRows };
}

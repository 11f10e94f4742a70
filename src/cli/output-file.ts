/**
 * Output files written whole or not at all, and standard output that may be closed or fail. A command's `--out` goes
 * into a temporary file beside the target and is renamed over it once complete: Ctrl-C, a kill or a full disk
 * while it is written leaves the file that was there as it was, and no half-written one. A reader that stops
 * reading standard output (`| head -1`) ends the command's printing only; any other failure of it is reported.
 */

import { createWriteStream, realpathSync, rmSync, statSync, type WriteStream } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { finished } from "node:stream/promises";

export interface PendingFile {
  /** Where the text goes until `commit`. */
  stream: WriteStream;
  /** Ends the stream and puts the file in place of the target. */
  commit(): Promise<void>;
  /** Drops what was written; the target is left as it was. */
  abandon(): Promise<void>;
}

/**
 * A file to write at `path`, in place only once committed. Only a regular file (or nothing yet) is replaced that way,
 * through a symbolic link to the file it names; anything else at `path` (a pipe, `/dev/null`, `/dev/fd/N`, a device)
 * is written into as it is, as before.
 */
export function pendingFile(path: string): PendingFile {
  const target = statSync(path, { throwIfNoEntry: false });
  if (target && !target.isFile()) return directFile(path);
  // The file a link names is the one replaced (the link stays a link).
  const real = target ? realpathSync(path) : path;
  const temporary = join(dirname(real), `.${basename(real)}.partial-${process.pid}`);
  const stream = createWriteStream(temporary);
  // An error (a missing folder, a full disk) ends the stream; `commit` reports it (finished() rejects with it).
  stream.on("error", () => {});
  // Killed while writing: the partial file goes too (the signal's default, ending the process, follows).
  const onSignal = (signal: NodeJS.Signals) => {
    rmSync(temporary, { force: true });
    process.kill(process.pid, signal);
  };
  const signals: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const s of signals) process.once(s, onSignal);
  const release = () => {
    for (const s of signals) process.off(s, onSignal);
  };
  return {
    stream,
    async commit() {
      try {
        stream.end();
        await finished(stream);
        await rename(temporary, real);
      } catch (e) {
        await rm(temporary, { force: true });
        throw e;
      } finally {
        release();
      }
    },
    async abandon() {
      release();
      // The file is opened (created) asynchronously: it is removed once the stream has closed, not before.
      // (Closed, not rejected, when the open failed: abandoning is no place for the write's own error.)
      const closed = stream.closed ? Promise.resolve() : new Promise<void>((resolve) => stream.once("close", () => resolve()));
      stream.destroy();
      await closed;
      await rm(temporary, { force: true });
    },
  };
}

/** Written into as it is: what is at `path` is not a file that can be replaced (a pipe, a device). */
function directFile(path: string): PendingFile {
  const stream = createWriteStream(path);
  stream.on("error", () => {});
  return {
    stream,
    async commit() {
      stream.end();
      await finished(stream);
    },
    async abandon() {
      stream.destroy();
    },
  };
}

/**
 * Runs a command with standard output watched: EPIPE (the reader closed it) is ignored, any other write error
 * turns the command's status into 2 (a broken job, never 1, which CI reads as a regression or a failed run).
 */
export async function withGuardedStdout(run: () => Promise<number>): Promise<number> {
  let failure: NodeJS.ErrnoException | null = null;
  const onError = (e: NodeJS.ErrnoException) => {
    if (e.code !== "EPIPE") failure ??= e;
  };
  process.stdout.on("error", onError);
  try {
    const status = await run();
    // A write's error arrives after it: let it.
    await new Promise((resolve) => setImmediate(resolve));
    if (failure) {
      process.stderr.write(`error: cannot write to standard output: ${(failure as Error).message}\n`);
      return 2;
    }
    return status;
  } finally {
    process.stdout.off("error", onError);
  }
}

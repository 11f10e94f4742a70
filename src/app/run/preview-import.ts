/**
 * A big file's samples shown while the file is still being read: a *preview*, not an import. The reader hands the
 * samples it has checked so far (`onSamples`, a megabyte of the file at a time from the Worker); they are added to
 * a run model of their own a slice of work at a time (at most `sliceMs`, yielding to the page between slices), so
 * the views can draw them at once and stay responsive. Nothing is imported until the whole file is checked: then
 * `keep` ends the same model as an import of the valid lines (what `buildRun` of the read gives: the final batch,
 * the last line's settings and metrics), or `discard` gives it up.
 *
 * Where the model is shown, and what is set aside meanwhile, is the target's business (the page's store:
 * src/app/store.ts, `labPreview`).
 *
 *   waiting ──add (first samples)──▶ shown ──keep──▶ kept
 *      │                              │  └──discard──▶ discarded (the target restores what it set aside)
 *      │                              └──supersede──▶ discarded (the target replaced the preview itself)
 *      └──add, target refuses──▶ refused (keep gives null: the import builds its run as without a preview)
 */

import { yieldToPage } from "./export-slices.js";
import { environmentMetricsOf, forkContinuationOf, runEndEvents, runStart, sampleEvents, sampleStart } from "./jsonl.js";
import type { JsonlProgress, JsonlReadResult, SampleLine } from "../../scenario/jsonl-reader.js";
import { RunModel } from "./run-model.js";

/** Files at least this big are previewed while they are read (a smaller one is read in well under a second). */
export const PREVIEW_MIN_BYTES = 4 * 1024 * 1024;

export type PreviewState = "waiting" | "shown" | "refused" | "kept" | "discarded";

export interface PreviewProgress extends JsonlProgress {
  /** `reading`: the file is still being read (or its last samples added); `problems`: read, with problems. */
  phase: "reading" | "problems";
  /** Lines with problems so far (known once read). */
  badLines: number;
}

export interface PreviewTarget {
  /** The first samples are in: show `model` (setting the current run aside). False: not now (the preview is refused). */
  begin(model: RunModel): boolean;
  /** The model has more samples. */
  changed(): void;
  progress(progress: PreviewProgress): void;
  /** The preview is given up: put back what was set aside. */
  discard(): void;
}

export interface PreviewOptions {
  /** The longest stretch of work between two yields. Default 8 ms. */
  sliceMs?: number;
  yieldToPage?: () => Promise<void>;
  now?: () => number;
}

export class PreviewImport {
  readonly model = new RunModel();
  private lines: SampleLine[] = [];
  private applied = 0;
  private current: PreviewState = "waiting";
  /** Samples are being added (a slice, or a pause between two); `pumping` settles when they all are. */
  private running = false;
  private pumping: Promise<void> = Promise.resolve();
  private readonly sliceMs: number;
  private readonly pause: () => Promise<void>;
  private readonly now: () => number;

  constructor(
    private readonly target: PreviewTarget,
    options: PreviewOptions = {},
  ) {
    this.sliceMs = options.sliceMs ?? 8;
    this.pause = options.yieldToPage ?? yieldToPage;
    this.now = options.now ?? (() => performance.now());
    // Its settings (mode, turns, sequence length) are on the file's last line: `keep` sets them.
    this.model.apply(runStart(null));
  }

  get state(): PreviewState {
    return this.current;
  }

  /** Samples in the model so far (of `received`). */
  get shownSamples(): number {
    return this.applied;
  }

  get received(): number {
    return this.lines.length;
  }

  /** More checked samples, in file order: the first ones start the preview; each is added to the model in slices. */
  add(samples: readonly SampleLine[]): void {
    if (this.current !== "waiting" && this.current !== "shown") return;
    for (const s of samples) this.lines.push(s);
    if (this.current === "waiting") {
      if (this.lines.length === 0) return;
      if (!this.target.begin(this.model)) {
        this.current = "refused";
        this.lines = [];
        return;
      }
      this.current = "shown";
    }
    if (!this.running) {
      this.running = true;
      this.pumping = this.pump();
    }
  }

  progress(progress: PreviewProgress): void {
    if (this.current === "shown") this.target.progress(progress);
  }

  /** Resolves once every sample handed so far is in the model (or the preview ended). */
  async drained(): Promise<void> {
    while (this.running) await this.pumping;
  }

  /**
   * The whole file is checked and its valid lines are imported: the model is ended as `buildRun(read)` would build
   * it (any sample not added yet is added now) and handed over; null when there was no preview (build the run
   * as usual then).
   */
  keep(read: Pick<JsonlReadResult, "samples" | "footer">): { model: RunModel; scenario: unknown } | null {
    if (this.current !== "shown") return null;
    this.current = "kept";
    const samples = read.samples;
    while (this.applied < samples.length) this.applySample(samples[this.applied]!, this.applied++);
    const start = runStart(read.footer);
    const summary = this.model.summary;
    summary.mode = start.mode;
    summary.maxRolloutTurns = start.maxRolloutTurns;
    summary.maxSeqLen = start.maxSeqLen;
    for (const e of runEndEvents(samples, read.footer)) this.model.apply(e);
    this.model.setEnvironmentMetrics(environmentMetricsOf(read.footer));
    this.model.setForkContinuation(forkContinuationOf(read.footer));
    this.lines = [];
    return { model: this.model, scenario: read.footer?.scenario ?? null };
  }

  /** Gives the preview up (stopped, declined, failed): the target puts back what it set aside. */
  discard(): void {
    const was = this.current;
    this.end();
    if (was === "shown") this.target.discard();
  }

  /** The target itself replaced the preview (another run shown): it ends without putting anything back. */
  supersede(): void {
    this.end();
  }

  private end(): void {
    if (this.current === "kept") return;
    this.current = "discarded";
    this.lines = [];
  }

  private async pump(): Promise<void> {
    try {
      let start = this.now();
      while (this.current === "shown" && this.applied < this.lines.length) {
        this.applySample(this.lines[this.applied]!, this.applied);
        this.applied += 1;
        if (this.now() - start >= this.sliceMs && this.applied < this.lines.length) {
          this.target.changed();
          await this.pause();
          start = this.now();
        }
      }
      if (this.current === "shown") this.target.changed();
    } finally {
      // Set as the last slice ends (not a microtask later): samples added from then on start a new pump.
      this.running = false;
    }
  }

  private applySample(s: SampleLine, sample: number): void {
    this.model.appendSamples([sampleStart(s, sample)]);
    for (const event of sampleEvents(s, sample)) this.model.apply(event);
  }
}

/** The page's store: one zustand store of slices (../store.ts combines them), each read one field per selector. */

import type { CompareSlice } from "../compare/compare-slice.js";
import type { JsonlProgress } from "../../scenario/jsonl-reader.js";
import type { ForksSlice } from "../fork/forks-slice.js";
import type { FormSlice } from "./form-slice.js";
import type { LayoutSlice } from "./layout-slice.js";
import type { SelectionSlice } from "./selection-slice.js";
import type { TokensSlice } from "./tokens-slice.js";
import type { ViewSlice } from "./view-slice.js";

export interface LabState {
  /** The set-up: the form, the scenario it writes, what a run may use. */
  form: FormSlice;
  /** Where the views look in the run shown. */
  selection: SelectionSlice;
  /** A model run's token texts. */
  tokens: TokensSlice;
  /** The tab open. */
  view: ViewSlice;
  /** The set-up column and the panes' split. */
  layout: LayoutSlice;
  /** The comparison's sides and sources. */
  compare: CompareSlice;
  /** The forks of the run shown. */
  forks: ForksSlice;
  /** How far a previewed big file is read (it changes often: only the preview's banner reads it). */
  previewProgress: JsonlProgress;
}

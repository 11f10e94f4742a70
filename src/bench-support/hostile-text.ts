/**
 * Text that breaks naive parsers: the protocol's fragments, alone and repeated, as a model stuck in a loop writes
 * them. The fault suite's fuzz tests (src/faults/fuzz.test.ts) check that every parser survives them;
 * `npm run bench:hostile-input` measures how long they take and whether that grows linearly with their length.
 */

export const PROTOCOL_FRAGMENTS: readonly string[] = [
  "<tool_call>",
  "</tool_call>",
  "<tool_call>{",
  '<tool_call>{"name": ',
  '{"name": "run_shell", "arguments": ',
  '{"command": "ls"}}',
  "<think>",
  "</think>",
  "<think",
  "think>",
  "<|im_start|>",
  "<|im_end|>",
  "{",
  "}",
  "[",
  "]",
  '"',
  "\\",
  "\\u",
  ":",
  ",",
  "\n",
  "\r\n",
  "é",
  "😀",
  "\ud800",
  "\u0000",
];

/** Pairs of fragments that make a parser open and close (or open and never close) over and over. */
export const FRAGMENT_PAIRS: readonly string[] = ["<tool_call>{", "<tool_call></tool_call>", "<think></think>", "<think><tool_call>", '{"name": [', "[{", '"\\'];

/** Each protocol fragment and pair repeated `times` times: the inputs a looping model produces. */
export function repeatedFragments(times: number): string[] {
  return [...PROTOCOL_FRAGMENTS, ...FRAGMENT_PAIRS].map((f) => f.repeat(times));
}

/**
 * An ordinary reply of about `length` characters, the reference a hostile input of that length is timed against:
 * prose with a closed think block and one well-formed tool call every ~400 characters.
 */
export function ordinaryReply(length: number): string {
  const unit =
    "<think>\nThe file should list the failing tests; read it first, then write the summary.\n</think>\n\n" +
    "I will look at the report before changing anything, since the numbers there decide the answer. " +
    '<tool_call>\n{"name": "read_file", "arguments": {"path": "/workspace/reports/summary.txt"}}\n</tool_call>\n';
  return unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
}

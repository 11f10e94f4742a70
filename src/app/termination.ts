/** Each termination reason in words, for people and tests alike. */
export const TERMINATION_WORDS: Record<string, string> = {
  terminated: "terminated by the environment",
  truncated_context: "context truncated at max_seq_len",
  truncated_response: "response truncated at its token limit",
  max_turns: "max turns reached",
  error: "error",
  cancelled: "cancelled",
  not_recorded: "ended (the imported dump names no reason)",
};

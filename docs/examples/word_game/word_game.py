"""A word game written the way NeMo RL environments are written (docs/python-environments.md).

The environment holds a secret five-letter word; the model answers ``<guess>word</guess>``; the environment marks
each letter: ``G`` right letter in the right place, ``Y`` in the word elsewhere, ``_`` not in the word (a repeated
letter is marked as often as the word has it). Reward 1 for the right word, else 0; the episode ends on the right
word or when the guesses run out. A datum's state is its metadata: ``{"secret", "guesses", "max_guesses"}``.

It is a Ray actor class (``@ray.remote``), as NeMo RL's environments are. Serve it with the lab's bridge, from this
folder::

    python -m rollout_lab_bridge word_game:WordGameEnv --dataset word_game:make_dataset --port 8765

With Ray installed the bridge starts it as a Ray actor; without, the bridge's stand-in ``ray`` module runs it in the
bridge's process. ``word_game.js`` beside it is the same game as a lab module: the two give the same transcripts.
"""

from typing import Any, NamedTuple, Optional

import ray

try:
    import torch
except ImportError:  # the bridge runs without torch too: rewards and flags are then lists
    torch = None

try:
    from nemo_rl.environments.interfaces import EnvironmentInterface, EnvironmentReturn
except ImportError:  # the same shapes as NeMo RL's, for machines without it

    class EnvironmentInterface:
        pass

    class EnvironmentReturn(NamedTuple):
        observations: list
        metadata: list
        next_stop_strings: Optional[list]
        rewards: Any
        terminateds: Any
        answers: Optional[list]


WORDS = [
    "cigar", "rebut", "sissy", "humph", "awake", "blush", "focal", "evade", "naval", "serve",
    "heath", "dwarf", "model", "karma", "stink", "grade", "quiet", "bench", "abate", "feign",
]
STOP = ["</guess>"]


def marks(guess: str, secret: str) -> str:
    """G / Y / _ for each letter of ``guess``; a letter is marked Y no more often than ``secret`` has it unplaced."""
    out = ["_"] * 5
    left: dict = {}
    for i in range(5):
        if guess[i] == secret[i]:
            out[i] = "G"
        else:
            left[secret[i]] = left.get(secret[i], 0) + 1
    for i in range(5):
        if out[i] != "G" and left.get(guess[i], 0) > 0:
            out[i] = "Y"
            left[guess[i]] -= 1
    return " ".join(out)


def prompt(max_guesses: int) -> str:
    return (
        "<|im_start|>user\nGuess the secret five-letter word. Answer with <guess>word</guess>. Each guess is marked "
        "letter by letter: G the right letter in the right place, Y in the word elsewhere, _ not in the word. "
        f"You have {max_guesses} guesses.<|im_end|>\n<|im_start|>assistant\n"
    )


def make_dataset(size: int, seed: int, config: dict) -> list:
    """``size`` games; the same seed gives the same words (the JavaScript module picks them the same way)."""
    max_guesses = int(config.get("max_guesses", 6))
    return [
        {
            "message_log": [{"role": "user", "content": prompt(max_guesses)}],
            "extra_env_info": {"secret": WORDS[(seed * 7 + i * 3) % len(WORDS)], "guesses": [], "max_guesses": max_guesses},
            "stop_strings": STOP,
        }
        for i in range(size)
    ]


@ray.remote
class WordGameEnv(EnvironmentInterface):
    """Guess the secret five-letter word: each <guess>word</guess> is marked G / Y / _ letter by letter."""

    def __init__(self, cfg: Optional[dict] = None):
        self.cfg = cfg or {}

    def _turn(self, log: list, state: dict):
        last = log[-1] if log else None
        text = last["content"] if last and last["role"] == "assistant" else ""
        start = text.find("<guess>")
        end = text.find("</guess>", start + 7) if start >= 0 else -1
        guess = text[start + 7 : end].strip(" \t\r\n").lower() if end >= 0 else ""
        if len(guess) != 5 or not guess.isalpha() or not guess.isascii():
            done = len(state["guesses"]) >= state["max_guesses"]
            return "Answer with <guess>word</guess>: five letters.", 0.0, done, state
        guesses = state["guesses"] + [guess]
        state = {**state, "guesses": guesses}
        if guess == state["secret"]:
            return f"{guess}: G G G G G, solved in {len(guesses)}", 1.0, True, state
        left = state["max_guesses"] - len(guesses)
        tail = f"{left} guess{'' if left == 1 else 'es'} left" if left > 0 else f"no guesses left; it was {state['secret']}"
        return f"{guess}: {marks(guess, state['secret'])} ({tail})", 0.0, left <= 0, state

    def step(self, message_log_batch: list, metadata: list) -> EnvironmentReturn:
        observations, next_metadata, rewards, terminateds = [], [], [], []
        for log, state in zip(message_log_batch, metadata):
            text, reward, done, state = self._turn(log, state)
            observations.append({"role": "environment", "content": f"<environment>{text}</environment>\n"})
            next_metadata.append(None if done else state)
            rewards.append(reward)
            terminateds.append(done)
        return EnvironmentReturn(
            observations=observations,
            metadata=next_metadata,
            next_stop_strings=[None if done else STOP for done in terminateds],
            rewards=torch.tensor(rewards, dtype=torch.float32) if torch else rewards,
            terminateds=torch.tensor(terminateds, dtype=torch.bool) if torch else terminateds,
            answers=None,
        )

    def global_post_process_and_metrics(self, batch: dict):
        rewards = batch["total_reward"]
        rewards = rewards.tolist() if hasattr(rewards, "tolist") else list(rewards)
        turns = [sum(1 for m in log if m["role"] == "assistant") for log in batch["message_log"]]
        n = max(len(rewards), 1)
        return batch, {
            "word_game_solve_rate": sum(1 for r in rewards if r == 1.0) / n,
            "word_game_mean_turns": sum(turns) / n,
        }

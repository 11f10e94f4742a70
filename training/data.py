"""The episodes of ``npm run train:data`` (src/training/episode.ts) and their batches.

An episode is the whole final context as token ids and a mask: ``"1"`` on the tokens the loss applies to (the
assistant's turns but its mistakes), ``"2"`` on the mistakes and a learner's well-formed turns (never learned),
``"3"`` on a learner's malformed turns (its slips, whose likelihood train.py's ``--negative-weight`` lowers), ``"0"`` on
the context (the prompt, the environment's answers), which the loss may weigh low (``--context-loss-weight``). A batch holds episodes of one environment, which share a long prompt
prefix (the instructions, the tools); the prefix is run once per batch (model.Decoder.forward_with_prefix), the rest
of each episode as a padded suffix. Token t's target is predicted at position t - 1, so the prefix ends before the
first position whose next token is learned.
"""

from __future__ import annotations

import json
import random
import string
from dataclasses import dataclass
from pathlib import Path

import torch

from .model import ALLOWED_IDS

IGNORE = -100
IM_START = 257  # <|im_start|>: src/core/tokenizer/byte-level.ts's ADDED_TOKENS, the same id with merges
MASK_MARKS = frozenset("0123")
ALLOWED = frozenset(ALLOWED_IDS)


@dataclass
class Episode:
    env: str
    ids: list[int]
    mask: str

    @property
    def first_learned(self) -> int:
        """The first token the loss reads: learned (``"1"``) or a slip (``"3"``); -1 when none."""
        found = [i for i in (self.mask.find("1"), self.mask.find("3")) if i >= 0]
        return min(found) if found else -1


@dataclass
class Batch:
    env: str
    prefix: torch.Tensor  # [P]
    suffixes: torch.Tensor  # [B, S], right-padded with 0
    targets: torch.Tensor  # [B, S]: the next token where it is learned, else IGNORE
    context: torch.Tensor  # [B, S]: the next token where it is context after the shared prefix, else IGNORE
    tokens: int  # the episodes' real tokens (prefix counted per episode): what the model "read"
    learned: int
    slips: torch.Tensor | None = None  # [B, S]: the next token where it is a learner's slip ("3"), else IGNORE
    slip_tokens: int = 0
    weights: torch.Tensor | None = None  # [B, S]: each learned target's weight in the objective (copy_targets); None: all 1
    copy_tokens: int = 0  # how many learned targets are copy targets (weighted)


def load_episodes(path: str | Path, max_len: int, allowed: frozenset = ALLOWED) -> tuple[list[Episode], dict]:
    """Episodes with something to learn, each cut to ``max_len`` tokens; counts of what was cut or left out.
    ``allowed``: the ids the logit shaping lets the model emit (the vocabulary's)."""
    episodes, stats = [], {"episodes": 0, "cut": 0, "nothing_to_learn": 0, "blocked_targets": 0}
    with open(path, encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            ids, mask = record["ids"], record["mask"]
            if set(mask) - MASK_MARKS:
                raise ValueError(f"{path}: episode {record.get('env')}#{record.get('idx')}: mask characters other than 0, 1, 2 and 3 (training data of an older format? run npm run train:data again)")
            if len(ids) != len(mask):
                raise ValueError(f"{path}: episode {record.get('env')}#{record.get('idx')}: {len(ids)} ids but {len(mask)} mask characters")
            if len(ids) > max_len:
                ids, mask = ids[:max_len], mask[:max_len]
                stats["cut"] += 1
            # A target the graph blocks (-1e4) cannot be learned; none should occur in the oracle's text.
            blocked = {i for i, (t, m) in enumerate(zip(ids, mask)) if m == "1" and t not in allowed}
            if blocked:
                stats["blocked_targets"] += len(blocked)
                mask = "".join("0" if i in blocked else m for i, m in enumerate(mask))
            if Episode(record["env"], ids, mask).first_learned < 1:
                stats["nothing_to_learn"] += 1
                continue
            episodes.append(Episode(record["env"], ids, mask))
    stats["episodes"] = len(episodes)
    return episodes, stats


def common_prefix(rows: list[list[int]]) -> int:
    first = rows[0]
    n = min(len(r) for r in rows)
    for i in range(n):
        token = first[i]
        if any(r[i] != token for r in rows):
            return i
    return n


def copy_targets(episode: Episode) -> set[int]:
    """The learned positions whose token can only be copied from the task: the pair (previous token, token) occurs
    exactly once in the prompt (before the first learned token), inside its user turn (after the last
    ``<|im_start|>`` but the assistant's header that ends the prompt). The task's file name in a call (`/workspace`
    `/service`, written once in the task line) is one; a token of the call format is not (the system turn's tools and
    example hold it). What an induction head completes, and what a loss spread over a whole turn's tokens weighs
    little (docs/training.md, sections 2 and 7, "Session 30")."""
    first = episode.first_learned
    if first < 1:
        return set()
    ids = episode.ids
    starts = [i for i in range(first) if ids[i] == IM_START]
    last_turn = starts[-2] if len(starts) >= 2 else 0
    seen: dict[tuple[int, int], int] = {}  # pair -> where it occurs, or -1 when more than once
    for i in range(1, first):
        pair = (ids[i - 1], ids[i])
        seen[pair] = -1 if pair in seen else i
    return {t for t in range(first, len(ids)) if episode.mask[t] == "1" and seen.get((ids[t - 1], ids[t]), -1) > last_turn}


def make_batch(episodes: list[Episode], allowed: frozenset = ALLOWED, copy_weight: float = 1.0) -> Batch:
    shared = min(common_prefix([e.ids for e in episodes]), min(e.first_learned for e in episodes) - 1)
    width = max(len(e.ids) for e in episodes) - shared
    suffixes = torch.zeros(len(episodes), width, dtype=torch.long)
    targets = torch.full((len(episodes), width), IGNORE, dtype=torch.long)
    context = torch.full((len(episodes), width), IGNORE, dtype=torch.long)
    slips = torch.full((len(episodes), width), IGNORE, dtype=torch.long)
    weights = torch.ones(len(episodes), width) if copy_weight != 1.0 else None
    learned = slip_tokens = copies = 0
    for row, e in enumerate(episodes):
        rest = e.ids[shared:]
        if weights is not None:
            for t in copy_targets(e):
                weights[row, t - shared - 1] = copy_weight  # token t is predicted at position t - 1
                copies += 1
        suffixes[row, : len(rest)] = torch.tensor(rest)
        for j in range(len(rest) - 1):
            mark, token = e.mask[shared + j + 1], rest[j + 1]
            if mark == "1":
                targets[row, j] = token
                learned += 1
            elif mark == "3":
                slips[row, j] = token
                slip_tokens += 1
            elif mark == "0" and token in allowed:  # a token the graph blocks cannot be learned, as context either
                context[row, j] = token
    return Batch(episodes[0].env, torch.tensor(episodes[0].ids[:shared], dtype=torch.long), suffixes, targets, context, sum(len(e.ids) for e in episodes), learned, slips, slip_tokens, weights, copies)


# The bytes a slip may touch, and what it may put in their place: the letters, digits and marks of words, paths and
# numbers. The JSON's, the tags' and the calls' punctuation is never slipped nor the byte right after a slip, so their
# counts (`"}}`, `]<call`) are learned only from clean text.
SLIP_BYTES = bytes(sorted((string.ascii_letters + string.digits + "_./-").encode()))  # sorted: the measured runs drew in this order


def with_slips(episode: Episode, rate: float, rng: random.Random) -> Episode:
    """The episode with, in each learned turn (a run of mask ``"1"``) with probability ``rate``, one slip of the kind a
    byte-level model makes in a rollout: a byte of a word dropped, doubled or replaced. The slip is marked ``"2"``
    (never learned; after a drop, the byte now in its place, else the model would learn to skip it) and the turn's
    own continuation stays learned after it: the model sees its own kind of mistake inside a turn and learns to carry
    on from it (finish the path, close the string and the JSON) instead of drifting, as the learner's states teach it
    between turns. A byte equal to the next is not dropped or doubled: the learned byte after it would then teach a
    letter too many or too few (`dif]`, `difff`)."""
    if rate <= 0:
        return episode
    ids, mask = list(episode.ids), list(episode.mask)
    turns, start = [], None
    for i, m in enumerate(mask + ["0"]):
        if m == "1" and start is None:
            start = i
        elif m != "1" and start is not None:
            turns.append((start, i))
            start = None
    # From the last turn back, so that an earlier turn's positions hold when a later one changes length.
    for a, b in reversed(turns):
        if rng.random() >= rate:
            continue
        spots = [i for i in range(a + 2, b - 3) if ids[i] in SLIP_BYTES and ids[i + 1] in SLIP_BYTES and ids[i + 2] in SLIP_BYTES]
        if not spots:
            continue
        i = rng.choice(spots)
        kind = rng.choice(("drop", "double", "replace"))
        if kind != "replace" and ids[i] == ids[i + 1]:
            kind = "replace"
        if kind == "drop":
            del ids[i], mask[i]
            mask[i] = "2"
        elif kind == "double":
            ids.insert(i + 1, ids[i])
            mask.insert(i + 1, "2")
        else:
            ids[i] = rng.choice([c for c in SLIP_BYTES if c not in (ids[i - 1], ids[i], ids[i + 1])])
            mask[i] = "2"
    return Episode(episode.env, ids, "".join(mask))


def epoch_batches(episodes: list[Episode], batch_size: int, attention_budget: int, seed: int, epoch: int, slip_rate: float = 0.0, allowed: frozenset = ALLOWED, copy_weight: float = 1.0) -> list[Batch]:
    """One pass over the episodes: per environment, shuffled and cut into batches of at most ``batch_size``
    episodes and ``attention_budget`` attention scores per head (episodes x longest length squared: the scores
    and probabilities kept for the backward pass are what fills the memory); the batches of all environments in
    a shuffled order. The same (seed, epoch) gives the same batches, so a resumed run continues where it stopped."""
    rng = random.Random(f"{seed}/{epoch}")
    groups = _epoch_groups(episodes, batch_size, attention_budget, rng)
    return [make_batch([with_slips(e, slip_rate, rng) for e in g], allowed, copy_weight) for g in groups]


def epoch_batch_count(episodes: list[Episode], batch_size: int, attention_budget: int, seed: int, epoch: int) -> int:
    """How many batches ``epoch_batches`` gives for this epoch, without making them. It differs from epoch to epoch:
    the attention budget cuts a batch short where a long episode lands, and the shuffle moves the long ones."""
    return len(_epoch_groups(episodes, batch_size, attention_budget, random.Random(f"{seed}/{epoch}")))


def _epoch_groups(episodes: list[Episode], batch_size: int, attention_budget: int, rng: random.Random) -> list[list[Episode]]:
    by_env: dict[str, list[Episode]] = {}
    for e in episodes:
        by_env.setdefault(e.env, []).append(e)
    groups: list[list[Episode]] = []
    for env in sorted(by_env):
        pool = by_env[env][:]
        rng.shuffle(pool)
        # Episodes with the same prompt next to each other (sorted by their ids, within windows so that epochs
        # still mix): a batch then shares the whole prompt (the instructions, the tools, often the board), which
        # is run once, rather than only its first tokens.
        window = batch_size * 16
        pool = [e for start in range(0, len(pool), window) for e in sorted(pool[start : start + window], key=lambda e: e.ids[: e.first_learned])]
        group: list[Episode] = []
        for e in pool:
            longest = max([len(x.ids) for x in group] + [len(e.ids)])
            if group and (len(group) >= batch_size or longest * longest * (len(group) + 1) > attention_budget):
                groups.append(group)
                group = []
            group.append(e)
        if group:
            groups.append(group)
    rng.shuffle(groups)
    return groups

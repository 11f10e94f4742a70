"""Can the built-in decoder learn to copy by content here, and after how many steps? (docs/training.md, sections 4 and 7)

The workspace's calls need the task's file name copied from ~85 or more tokens back (section 6's swap probe says the
trained weights do not). This probe asks the question without the environments: rows of uniformly random allowed
tokens, with a run of them repeated, and the loss on the repeat's tokens after its first.

- ``--mode repeat`` (the default): a run of random length (8 to half the row) repeated right after itself, at a random
  place in the row. The distance back to the earlier copy varies, so only a lookup by content (an induction head:
  find where the current token stood before, predict what followed it) brings the loss down: what a file name needs.
- ``--mode shift``: the row's first half repeated as its second, always the same distance back; a head that attends a
  fixed offset does it (RoPE makes that easy), so this mode shows what the budget can form at all.

    python3 -m training.induction_probe [--mode repeat|shift] [--data <train:data folder>] [--size trained]
        [--steps 3000] [--time-limit 0] [--batch-size 64] [--length 96] [--lr 2e-3] [--device auto] [--seed 0]
        [--out weights.safetensors]

prints a JSON line every ``--log-every`` steps (``step``, ``seconds``, ``loss``) and a summary: ``chance`` (ln of the
allowed ids: the loss of a model that does not copy), ``half_chance_at_step`` (the first logged step whose loss fell
below half of chance, or null) and ``final_loss``. The vocabulary is the data folder's (``data.json``), else the
byte-level one. ``--out`` keeps the weights, for ``python3 -m training.train --init`` to start a first stage from a
decoder that already copies.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from dataclasses import replace
from pathlib import Path

import torch
from torch.nn import functional as F

from training import weights_file
from training.model import BYTE_LEVEL, SIZES, Decoder, Vocabulary


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python3 -m training.induction_probe", description=__doc__.split("\n\n")[0])
    p.add_argument("--mode", choices=["repeat", "shift"], default="repeat")
    p.add_argument("--data", help="a train:data folder whose data.json names the vocabulary (default: byte-level)")
    p.add_argument("--size", choices=sorted(SIZES), default="trained")
    p.add_argument("--steps", type=int, default=3000)
    p.add_argument("--time-limit", type=float, default=0, help="stop after this many seconds; 0: none")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--length", type=int, default=96, help="tokens a row")
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--log-every", type=int, default=20)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    p.add_argument("--out", metavar="FILE", help="write the probed weights here (a weights file that `training.train --init` starts from)")
    args = p.parse_args(argv)
    if args.length < 17:
        p.error("--length: at least 17 (two runs of 8 and a token)")
    return args


def probe_batch(allowed: torch.Tensor, rows: int, length: int, mode: str, rng: random.Random, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """``rows`` × ``length`` random tokens from ``allowed`` with a run repeated in each row, and the mask of the
    repeat's positions after its first (1: predicted by copying; where the loss is read)."""
    ids = allowed[torch.randint(len(allowed), (rows, length), generator=gen)]
    mask = torch.zeros(rows, length)
    for r in range(rows):
        if mode == "shift":
            run, start = length // 2, 0
        else:
            run = rng.randint(8, length // 2)
            start = rng.randint(0, length - 2 * run)
        ids[r, start + run:start + 2 * run] = ids[r, start:start + run]
        mask[r, start + run + 1:start + 2 * run] = 1
    return ids, mask


def masked_loss(model: Decoder, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    logits = model(ids)[:, :-1]
    per_token = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1), reduction="none")
    weights = mask[:, 1:].reshape(-1)
    return (per_token * weights).sum() / weights.sum()


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    vocabulary = BYTE_LEVEL
    if args.data:
        manifest = Path(args.data) / "data.json"
        try:
            vocabulary = Vocabulary.from_record(json.loads(manifest.read_text()).get("vocabulary"))
        except (OSError, KeyError, TypeError, ValueError) as error:
            print(f"{manifest}: {error}", file=sys.stderr)
            return 2
    device = torch.device("cuda" if args.device == "cuda" or (args.device == "auto" and torch.cuda.is_available()) else "cpu")
    model = Decoder(replace(SIZES[args.size], vocab_size=vocabulary.size), vocabulary).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.01)
    allowed = torch.tensor(sorted(vocabulary.allowed_ids))
    chance = math.log(len(allowed))
    rng, gen = random.Random(args.seed), torch.Generator().manual_seed(args.seed)
    started, loss_value, half_chance_at = time.perf_counter(), float("nan"), None
    step = 0
    while step < args.steps and not (args.time_limit and time.perf_counter() - started >= args.time_limit):
        ids, mask = probe_batch(allowed, args.batch_size, args.length, args.mode, rng, gen)
        for group in optimizer.param_groups:
            group["lr"] = args.lr * min(1.0, (step + 1) / args.warmup)
        loss = masked_loss(model, ids.to(device), mask.to(device))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        step += 1
        loss_value = loss.item()
        if step % args.log_every == 0 or step == args.steps:
            if half_chance_at is None and loss_value < chance / 2:
                half_chance_at = step
            print(json.dumps({"step": step, "seconds": round(time.perf_counter() - started, 1), "loss": round(loss_value, 4)}), flush=True)
    summary = {
        "mode": args.mode,
        "size": args.size,
        "vocabulary_size": vocabulary.size,
        "device": device.type,
        "steps": step,
        "seconds": round(time.perf_counter() - started, 1),
        "tokens_read": step * args.batch_size * args.length,
        "chance": round(chance, 4),
        "final_loss": round(loss_value, 4),
        "half_chance_at_step": half_chance_at,
    }
    if args.out:
        weights_file.save(args.out, model.cpu(), training={"induction_probe": summary})
        summary["weights"] = args.out
    print(json.dumps({"summary": summary}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

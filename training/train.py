"""``python3 -m training.train --data training/data --out training/out [--size trained] [--steps 2000] …``

Trains the built-in decoder (model.py) on the episodes of ``npm run train:data``: cross-entropy on the learned
tokens (optionally plus a low weight of it on the context after the shared prompt, the environment's answers, and
the log-likelihood of a learner's malformed turns, lowered), AdamW with a linear warm-up and a cosine decay, a seed for the initialisation and the batch order,
checkpoints (``checkpoint.pt``, ``--resume`` continues from one), the held-out loss and next-token accuracy per
environment, and the weights file (``weights.safetensors``) that ``npm run build:model`` turns into builtin:trained.
Prints one JSON line per log step; ``train.json`` sums the run up (speeds included).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import torch
from torch.nn import functional as F

from . import weights_file
from .data import IGNORE, Batch, epoch_batch_count, epoch_batches, load_episodes
from .model import SIZES, Decoder, Vocabulary

PROJECT = Path(__file__).resolve().parent.parent


def portable_name(file: str) -> str:
    """A file as a committed summary names it: relative to the project when inside it, else its own name (another
    machine's absolute path names nothing there; the SHA-256 beside it says which file it was)."""
    path = Path(file).resolve()
    return str(path.relative_to(PROJECT)) if path.is_relative_to(PROJECT) else path.name


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python3 -m training.train", description=__doc__.split("\n\n")[1])
    p.add_argument("--data", required=True, help="the folder with train.jsonl and held_out.jsonl")
    p.add_argument("--out", required=True, help="where checkpoint.pt, weights.safetensors and train.json go")
    p.add_argument("--size", choices=sorted(SIZES), default="trained")
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--weight-decay", type=float, default=0.01)
    p.add_argument("--batch-size", type=int, default=16, help="episodes per batch at most")
    p.add_argument("--attention-budget", type=float, default=3e7, help="episodes x longest length^2 per batch at most (memory: ~200 bytes each at the trained size)")
    p.add_argument("--max-len", type=int, default=4096, help="episodes are cut to this many tokens")
    p.add_argument("--context-loss-weight", type=float, default=0.0, help="the weight of the mean loss on context tokens after the shared prefix (the environment's answers: what copying a board or a path from earlier in the context learns from) beside the learned tokens' mean loss; 0: learned tokens only")
    p.add_argument("--negative-weight", type=float, default=0.0, help="the weight of the mean log-probability of a learner's malformed turns' tokens (mask 3: the turns the environment rejected, data of train:data --learner) added to the objective, so that training makes those tokens less likely where the model writes them (the invalid-action penalty as a negative-only policy gradient); 0: such turns are never learned")
    p.add_argument("--negative-floor", type=float, default=0.01, help="a slip token whose probability is already below this is left alone (its log-probability would fall without bound)")
    p.add_argument("--slip-rate", type=float, default=0.0, help="the share of learned turns given one slip (a byte dropped, doubled or replaced, never learned: data.with_slips) in each epoch's batches, so the model learns to carry on after its own kind of mistake; 0: none")
    p.add_argument("--copy-weight", type=float, default=1.0, help="the weight in the objective of a learned token only the task's text predicts (data.copy_targets: the pair of it and the token before occurs once in the prompt, in its user turn, e.g. the task's file name in a call); 1: as every other learned token")
    p.add_argument("--no-prefix-grad", action="store_true", help="run the shared prompt prefix without gradients (faster, inexact)")
    p.add_argument("--eval-every", type=int, default=250)
    p.add_argument("--eval-episodes", type=int, default=200, help="held-out episodes per evaluation at most")
    p.add_argument("--checkpoint-every", type=int, default=250)
    p.add_argument("--log-every", type=int, default=10)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto", help="where to train; auto: a CUDA GPU when torch sees one, else the CPU")
    p.add_argument("--time-limit", type=float, default=0, help="stop (checkpoint and export) after this many seconds of training, the learning rate decayed to 0 by then; 0: none")
    p.add_argument("--init", metavar="FILE", help="start from a weights file's parameters (a second stage on top of a finished run: a fresh optimizer, warm-up and decay) instead of a random initialisation")
    p.add_argument("--resume", action="store_true", help="continue from <out>/checkpoint.pt")
    p.add_argument("--export-only", metavar="FILE", help="write <out>/checkpoint.pt's weights to FILE (a look at a run under way) and stop")
    return p.parse_args(argv)


def slip_log_probs(flat: torch.Tensor, slips: torch.Tensor) -> torch.Tensor:
    """The log-probabilities of the slip tokens (``slips`` not IGNORE), in order."""
    kept = slips != IGNORE
    return -F.cross_entropy(flat[kept], slips[kept], reduction="none")


def batch_loss(model: Decoder, batch: Batch, prefix_grad: bool, context_weight: float = 0.0, negative_weight: float = 0.0, negative_floor: float = 0.0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The mean loss over the batch's learned tokens (0 when it has none), and how many of them the argmax got right;
    and the objective: that loss plus ``context_weight`` times the mean loss over its context tokens (when it has
    any), plus ``negative_weight`` times the slip tokens' summed log-probability over their count, those already
    below ``negative_floor`` left out of the sum (a negative-only policy gradient: the malformed turn's reward is the
    lowest, and a token the model wrote with probability near 1 gets almost no gradient from it, so the push lands
    on the uncertain tokens where the turn went wrong)."""
    device = model.lm_head.weight.device
    logits = model.forward_with_prefix(batch.prefix.to(device), batch.suffixes.to(device), prefix_grad)
    flat, targets = logits.reshape(-1, logits.shape[-1]), batch.targets.to(device).reshape(-1)
    kept = targets != IGNORE
    if batch.weights is not None and bool(kept.any()):
        # The copy targets' loss counted copy_weight times in the objective, the mean still over the learned tokens
        # (the others' step unchanged); the loss reported stays the plain mean. One cross-entropy pass for both.
        per_token = F.cross_entropy(flat, targets, ignore_index=IGNORE, reduction="none")
        loss = per_token.sum() / kept.sum()
        objective = (per_token * batch.weights.to(device).reshape(-1)).sum() / kept.sum()
    else:
        loss = F.cross_entropy(flat, targets, ignore_index=IGNORE) if bool(kept.any()) else flat.sum() * 0.0
        objective = loss
    correct = (flat[kept].argmax(-1) == targets[kept]).sum()
    if context_weight > 0:
        context = batch.context.to(device).reshape(-1)
        if bool((context != IGNORE).any()):
            objective = objective + context_weight * F.cross_entropy(flat, context, ignore_index=IGNORE)
    if negative_weight > 0 and batch.slip_tokens > 0 and batch.slips is not None:
        slips = batch.slips.to(device).reshape(-1)
        log_probs = slip_log_probs(flat, slips)
        kept_slips = slips != IGNORE
        # Only where the model had a likelier token than the one the learner sampled: the turn went wrong where
        # sampling left the argmax (the learner's greedy turns are well-formed), and a token that was the argmax is
        # as often the right token of a well-formed call (`"}}` closing a read_file's path as well as a write_file's).
        off_argmax = flat[kept_slips].detach().argmax(-1) != slips[kept_slips]
        pushed = off_argmax & (log_probs.detach() > math.log(negative_floor)) if negative_floor > 0 else off_argmax
        objective = objective + negative_weight * log_probs[pushed].sum() / log_probs.numel()
    return loss, correct, objective


def locate_step(step: int, batches_in: Callable[[int], int]) -> tuple[int, int]:
    """The epoch that ``step`` falls in and the step its first batch was, given each epoch's batch count."""
    epoch, start = 0, 0
    while step >= start + (count := batches_in(epoch)):
        if count == 0:
            raise ValueError("an epoch without batches: no training episodes")
        epoch, start = epoch + 1, start + count
    return epoch, start


def learning_rate(step: int, args: argparse.Namespace, seconds: float = 0.0) -> float:
    """Linear warm-up, then a cosine decay to 0 at ``--steps``, or at ``--time-limit`` seconds of training when that
    comes first (the decay follows whichever is further along, so a run cut by its time limit still ends annealed;
    such a run depends on the machine's speed, a run by steps alone does not)."""
    if step < args.warmup:
        return args.lr * (step + 1) / args.warmup
    progress = (step - args.warmup) / max(1, args.steps - args.warmup)
    if args.time_limit:
        progress = max(progress, seconds / args.time_limit)
    return args.lr * 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))


@torch.no_grad()
def evaluate(model: Decoder, batches: list[Batch]) -> dict:
    model.eval()
    per_env: dict[str, list[float]] = {}
    for batch in batches:
        loss, correct, _ = batch_loss(model, batch, prefix_grad=False)
        total = per_env.setdefault(batch.env, [0.0, 0, 0])
        total[0] += loss.item() * batch.learned
        total[1] += correct.item()
        total[2] += batch.learned
    model.train()
    envs = {env: {"loss": round(t[0] / t[2], 4), "accuracy": round(t[1] / t[2], 4), "tokens": t[2]} for env, t in sorted(per_env.items())}
    learned = sum(t[2] for t in per_env.values())
    return {"loss": round(sum(t[0] for t in per_env.values()) / max(1, learned), 4), "envs": envs}


def summarized_manifest(manifest: dict | None) -> dict | None:
    """data.json for the run's summary: a vocabulary by its size and SHA-256 (the merges are in the weights file)."""
    if not manifest or "vocabulary" not in manifest:
        return manifest
    vocabulary = {k: v for k, v in manifest["vocabulary"].items() if k not in ("merges", "allowed_ids")}
    return {**manifest, "vocabulary": {**vocabulary, "merges": len(manifest["vocabulary"]["merges"])}}


def emit(record: dict) -> None:
    print(json.dumps(record), flush=True)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    random.seed(args.seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    data = Path(args.data)
    manifest = json.loads((data / "data.json").read_text()) if (data / "data.json").exists() else None
    try:
        vocabulary = Vocabulary.from_record((manifest or {}).get("vocabulary"))
    except (KeyError, TypeError, ValueError) as error:
        print(f"{data / 'data.json'}: {error}", file=sys.stderr)
        return 2
    if vocabulary.merges and args.slip_rate > 0:
        print("--slip-rate: slips change bytes, so they need the byte-level vocabulary (this data has merges)", file=sys.stderr)
        return 2
    allowed = frozenset(vocabulary.allowed_ids)
    train, train_stats = load_episodes(data / "train.jsonl", args.max_len, allowed)
    held_out, held_out_stats = load_episodes(data / "held_out.jsonl", args.max_len, allowed) if (data / "held_out.jsonl").exists() else ([], {})
    if not train:
        print(f"{data / 'train.jsonl'}: no episode with a learned token", file=sys.stderr)
        return 1
    eval_pool = random.Random(args.seed).sample(held_out, min(len(held_out), args.eval_episodes))
    eval_batches = epoch_batches(eval_pool, args.batch_size, int(args.attention_budget), args.seed, 0, allowed=allowed) if eval_pool else []

    device = torch.device("cuda" if args.device == "cuda" or (args.device == "auto" and torch.cuda.is_available()) else "cpu")
    model = Decoder(replace(SIZES[args.size], vocab_size=vocabulary.size), vocabulary)
    first_stage = None
    if args.init:
        try:
            start, start_metadata = weights_file.load(args.init)
            first_stage = json.loads(start_metadata.get("training", "null"))
        except (OSError, ValueError) as error:
            print(f"--init: {error}", file=sys.stderr)
            return 2
        if start.vocabulary.merges != vocabulary.merges:
            print(f"--init: {args.init} speaks {len(start.vocabulary.merges)} merges, the data {len(vocabulary.merges)} (other ones): its ids mean other text", file=sys.stderr)
            return 2
        if start.architecture != model.architecture:
            print(f"--init: {args.init} holds a {start.architecture} decoder, not --size {args.size}'s {model.architecture}", file=sys.stderr)
            return 2
        model.load_state_dict(start.state_dict())
    model = model.to(device)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay}, {"params": no_decay, "weight_decay": 0.0}], lr=args.lr, betas=(0.9, 0.95))
    step, seconds, tokens_read, tokens_learned = 0, 0.0, 0, 0
    history: list[dict] = []
    checkpoint_path = out / "checkpoint.pt"
    init_sha256 = hashlib.sha256(Path(args.init).read_bytes()).hexdigest() if args.init else None
    if args.resume and checkpoint_path.exists() and not args.export_only:
        state = torch.load(checkpoint_path, map_location=device)
        if state.get("init_sha256", init_sha256) != init_sha256:
            # Trained from other starting weights (a first stage run again since): resuming would continue the old run
            # under the new one's name. It starts afresh from --init.
            print(f"--resume: {checkpoint_path} was trained from other starting weights than --init {args.init}; starting this stage afresh", file=sys.stderr)
        else:
            model.load_state_dict(state["model"])
            optimizer.load_state_dict(state["optimizer"])
            step, seconds, tokens_read, tokens_learned = state["step"], state["seconds"], state["tokens_read"], state["tokens_learned"]
            history = list(state.get("history", []))
            # The CPU generator's state: map_location put it on the training device, and set_rng_state takes a CPU tensor.
            torch.set_rng_state(state["torch_rng"].cpu())

    def save_checkpoint() -> None:
        state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step, "seconds": seconds, "tokens_read": tokens_read, "tokens_learned": tokens_learned, "torch_rng": torch.get_rng_state(), "args": vars(args), "init_sha256": init_sha256, "history": history}
        torch.save(state, out / "checkpoint.pt.tmp")
        (out / "checkpoint.pt.tmp").replace(checkpoint_path)

    if args.export_only:
        if not checkpoint_path.exists():
            print(f"{checkpoint_path}: no checkpoint to export", file=sys.stderr)
            return 1
        state = torch.load(checkpoint_path, map_location=device)
        # The checkpoint's own size and seed (the run's settings are kept in it), not this command's defaults.
        size, seed = state.get("args", {}).get("size", args.size), state.get("args", {}).get("seed", args.seed)
        if size != args.size:
            model = Decoder(replace(SIZES[size], vocab_size=vocabulary.size), vocabulary).to(device)
        model.load_state_dict(state["model"])
        weights_file.save(Path(args.export_only), model, {"size": size, "seed": seed, "steps": state["step"], "checkpoint": True})
        emit({"event": "exported", "weights": args.export_only, "step": state["step"]})
        return 0

    emit({"event": "start", "device": device.type, "size": args.size, "parameters": sum(p.numel() for p in model.parameters()), "train": train_stats, "held_out": held_out_stats, "step": step})
    # Epochs differ in length (the attention budget cuts batches where long episodes land), so a resumed step is
    # found by counting each epoch's batches from the first.
    epoch, epoch_start = locate_step(step, lambda e: epoch_batch_count(train, args.batch_size, int(args.attention_budget), args.seed, e))
    batches = epoch_batches(train, args.batch_size, int(args.attention_budget), args.seed, epoch, args.slip_rate, allowed, args.copy_weight)
    last_eval = None
    window_start, window_tokens, window_learned, window_loss = time.perf_counter(), 0, 0, []
    stopped_early = False
    while step < args.steps:
        # A resumed run that had already reached its time limit trains no further (its weights stay the same, so a
        # second stage started from them resumes too).
        if args.time_limit and seconds >= args.time_limit:
            stopped_early = True
            break
        if step - epoch_start >= len(batches):
            epoch, epoch_start = epoch + 1, epoch_start + len(batches)
            batches = epoch_batches(train, args.batch_size, int(args.attention_budget), args.seed, epoch, args.slip_rate, allowed, args.copy_weight)
        batch = batches[step - epoch_start]
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step, args, seconds)
        started = time.perf_counter()
        loss, _, objective = batch_loss(model, batch, not args.no_prefix_grad, args.context_loss_weight, args.negative_weight, args.negative_floor)
        optimizer.zero_grad(set_to_none=True)
        objective.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        seconds += time.perf_counter() - started
        step += 1
        tokens_read += batch.tokens
        tokens_learned += batch.learned
        window_tokens += batch.tokens
        window_learned += batch.learned
        window_loss.append(loss.item())
        if step % args.log_every == 0 or step == args.steps:
            elapsed = time.perf_counter() - window_start
            record = {"step": step, "epoch": epoch, "loss": round(sum(window_loss) / len(window_loss), 4), "lr": round(optimizer.param_groups[0]["lr"], 6), "tokens_per_s": round(window_tokens / elapsed), "learned_tokens_per_s": round(window_learned / elapsed)}
            history.append(record)
            emit(record)
            window_start, window_tokens, window_learned, window_loss = time.perf_counter(), 0, 0, []
        if eval_batches and (step % args.eval_every == 0 or step == args.steps):
            last_eval = {"step": step, **evaluate(model, eval_batches)}
            emit({"event": "eval", **last_eval})
        if step % args.checkpoint_every == 0:
            save_checkpoint()
        if args.time_limit and seconds >= args.time_limit:
            stopped_early = True
            break
    save_checkpoint()
    if eval_batches and (last_eval is None or last_eval["step"] != step):
        last_eval = {"step": step, **evaluate(model, eval_batches)}
        emit({"event": "eval", **last_eval})
    summary = {
        "size": args.size,
        "seed": args.seed,
        "steps": step,
        "stopped_early": stopped_early,
        "train_seconds": round(seconds, 1),
        "tokens_read": tokens_read,
        "tokens_learned": tokens_learned,
        "tokens_per_s": round(tokens_read / max(seconds, 1e-9)),
        "learned_tokens_per_s": round(tokens_learned / max(seconds, 1e-9)),
        "prefix_grad": not args.no_prefix_grad,
        "context_loss_weight": args.context_loss_weight,
        "slip_rate": args.slip_rate,
        "copy_weight": args.copy_weight,
        "negative_weight": args.negative_weight,
        "negative_floor": args.negative_floor,
        "init": portable_name(args.init) if args.init else None,
        "init_sha256": init_sha256,
        "threads": args.threads,
        "device": device.type,
        "held_out": last_eval,
        "data": summarized_manifest(manifest),
    }
    provenance = {k: summary[k] for k in ("size", "seed", "steps", "tokens_learned", "prefix_grad", "context_loss_weight", "slip_rate")}
    if args.negative_weight > 0:
        provenance.update(negative_weight=args.negative_weight, negative_floor=args.negative_floor)
    provenance["held_out_loss"] = last_eval["loss"] if last_eval else None
    if args.init:
        provenance["first_stage"] = first_stage  # the init file's own provenance: how the weights it started from were trained
    if summary["data"]:
        provenance["data"] = {k: summary["data"][k] for k in ("seed", "error_rate", "train_dataset_seeds", "held_out_dataset_seeds")}
    weights_file.save(out / "weights.safetensors", model, provenance)
    (out / "train.json").write_text(json.dumps({**summary, "history": history}, indent=2) + "\n")
    emit({"event": "done", "weights": str(out / "weights.safetensors"), **{k: summary[k] for k in ("steps", "train_seconds", "tokens_per_s", "learned_tokens_per_s")}})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Does a model copy a name from its context? The swap probe of docs/training.md (sections 6 and 7).

For each held-out episode whose learned tokens contain one of ``names`` (token texts, e.g. the workspace's config and
log names ``/service``, ``/settings``, …), take the first such learned position: the call that names the task's file.
Every earlier occurrence of that token (the task line's) is swapped for each name in turn, and the model's
probability of that name at the call is read. A model that copies follows the swap (argmax = the name the context
says); one that does not gives each name about the same probability whatever the context says.

    python3 -m training.copy_probe <weights.safetensors> <held_out.jsonl> [--names /service,/settings,…] [--episodes 40]

prints a JSON summary: per name, how often the argmax copies it and its mean probability; ``copy_rate`` over all
swaps (1.0: always copies; 1 / len(names) or so: guesses).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Callable, Iterable

import torch

from training.model import VOCAB_SIZE

DEFAULT_NAMES = ("/service", "/settings", "/config", "/app", "/server", "/worker")


def byte_to_unicode() -> dict[str, int]:
    """GPT-2's printable stand-ins for bytes (the merges' alphabet), back to the bytes."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1)) + list(range(ord("\xae"), ord("\xff") + 1))
    chars, extra = keep[:], 0
    for b in range(256):
        if b not in keep:
            keep.append(b)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(keep, chars)}


def token_texts(merges: Iterable[tuple[str, str]]) -> dict[int, str]:
    """Each id's text: bytes 0…255 as themselves, merge i (id VOCAB_SIZE + i) as its pair's bytes (special ids are left out)."""
    back = byte_to_unicode()
    texts = {i: bytes([i]) for i in range(256)}
    for j, (a, b) in enumerate(merges):
        texts[VOCAB_SIZE + j] = bytes(back[ch] for ch in a + b)
    return {i: t.decode("utf-8", "replace") for i, t in texts.items()}


def probe(model: Callable[[torch.Tensor], torch.Tensor], episodes: Iterable[dict], ids_of: dict[str, int], limit: int) -> dict:
    """The swap probe over ``episodes`` (training-data records: ``ids``, ``mask``), ``ids_of`` the probed names' ids."""
    names = list(ids_of)
    by_id = {i: n for n, i in ids_of.items()}
    per_name = {n: {"swaps": 0, "argmax_copies": 0, "mean_p": 0.0} for n in names}
    probed = 0
    with torch.no_grad():
        for episode in episodes:
            if probed >= limit:
                break
            ids, mask = episode["ids"], episode["mask"]
            calls = [t for t in range(1, len(ids)) if mask[t] == "1" and ids[t] in by_id]
            if not calls:
                continue
            at = calls[0]
            said = [i for i in range(at) if ids[i] == ids[at]]
            if not said:
                continue  # the name is not in the context: nothing to copy
            rows = []
            for name in names:
                row = list(ids[:at])
                for i in said:
                    row[i] = ids_of[name]
                rows.append(row)
            probabilities = torch.softmax(model(torch.tensor(rows))[:, -1].float(), dim=-1)
            for k, name in enumerate(names):
                stats = per_name[name]
                stats["swaps"] += 1
                stats["argmax_copies"] += int(int(probabilities[k].argmax()) == ids_of[name])
                stats["mean_p"] += float(probabilities[k, ids_of[name]])
            probed += 1
    swaps = sum(s["swaps"] for s in per_name.values())
    for stats in per_name.values():
        stats["mean_p"] = round(stats["mean_p"] / stats["swaps"], 4) if stats["swaps"] else None
    copies = sum(s["argmax_copies"] for s in per_name.values())
    return {"episodes": probed, "names": per_name, "copy_rate": round(copies / swaps, 4) if swaps else None}


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python3 -m training.copy_probe", description=__doc__.split("\n\n")[1])
    p.add_argument("weights")
    p.add_argument("episodes", help="a training-data JSONL (held_out.jsonl of npm run train:data)")
    p.add_argument("--names", default=",".join(DEFAULT_NAMES), help="the token texts to swap, comma-separated")
    p.add_argument("--episodes", dest="limit", type=int, default=40, help="episodes to probe at most")
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args(argv)
    from training.weights_file import load

    torch.set_num_threads(args.threads)
    try:
        model, _ = load(args.weights)
    except (OSError, ValueError) as error:
        print(f"{args.weights}: {error}", file=sys.stderr)
        return 2
    model.eval()
    texts = token_texts(model.vocabulary.merges)
    ids_of: dict[str, int] = {}
    for name in args.names.split(","):
        found = [i for i, t in texts.items() if t == name]
        if not found:
            print(f"--names: '{name}' is no token of {args.weights}'s vocabulary", file=sys.stderr)
            return 2
        ids_of[name] = found[0]
    with Path(args.episodes).open() as lines:
        result = probe(model, (json.loads(line) for line in lines if line.strip()), ids_of, args.limit)
    print(json.dumps({"weights": args.weights, **result}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The induction probe (training/induction_probe.py): its rows hold the repeat its mask says, and a decoder that can
copy at a fixed distance is seen to do so (the loss on the repeat falls below half of chance)."""

from __future__ import annotations

import contextlib
import io
import json
import random
import tempfile
import unittest
from pathlib import Path

import torch

from training import induction_probe, weights_file

ALLOWED = torch.arange(100, 180)


class ProbeBatchTest(unittest.TestCase):
    def test_shift_rows_repeat_their_first_half(self):
        ids, mask = induction_probe.probe_batch(ALLOWED, 4, 20, "shift", random.Random(0), torch.Generator().manual_seed(0))
        self.assertTrue(torch.equal(ids[:, 10:], ids[:, :10]))
        # The repeat's first token cannot be known; the other nine are learned.
        self.assertEqual(mask.sum(dim=1).tolist(), [9.0] * 4)
        self.assertTrue(torch.equal(mask[:, 11:], torch.ones(4, 9)))

    def test_repeat_rows_hold_the_run_the_mask_covers_at_varying_distances(self):
        ids, mask = induction_probe.probe_batch(ALLOWED, 64, 48, "repeat", random.Random(1), torch.Generator().manual_seed(1))
        self.assertTrue(bool(((ids >= 100) & (ids < 180)).all()))
        distances = set()
        for r in range(64):
            learned = mask[r].nonzero().flatten().tolist()
            run = len(learned) + 1
            start = learned[0] - 1  # the repeat's first token
            self.assertEqual(learned, list(range(learned[0], learned[0] + len(learned))))  # one contiguous span
            self.assertGreaterEqual(run, 8)
            self.assertTrue(torch.equal(ids[r, start:start + run], ids[r, start - run:start]))
            distances.add(run)
        # The distance back to the copy varies (so no fixed-offset head can do it).
        self.assertGreater(len(distances), 5)


class ProbeRunTest(unittest.TestCase):
    def test_a_fixed_distance_copy_is_learned_and_reported(self):
        out = io.StringIO()
        with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(out):
            weights = Path(tmp) / "probe.safetensors"
            code = induction_probe.main(["--size", "tiny", "--mode", "shift", "--steps", "200", "--length", "32",
                                         "--batch-size", "32", "--lr", "1e-2", "--log-every", "50", "--device", "cpu",
                                         "--out", str(weights)])
            kept, metadata = weights_file.load(weights)  # what `training.train --init` reads
        self.assertEqual(code, 0)
        self.assertEqual(json.loads(metadata["training"])["induction_probe"]["steps"], 200)
        self.assertEqual(kept.architecture.num_hidden_layers, 2)
        lines = [json.loads(line) for line in out.getvalue().splitlines()]
        summary = lines[-1]["summary"]
        self.assertEqual([line["step"] for line in lines[:-1]], [50, 100, 150, 200])
        self.assertEqual(summary["steps"], 200)
        self.assertAlmostEqual(summary["chance"], 4.6151, places=3)  # ln of the byte-level vocabulary's 101 allowed ids
        self.assertLess(lines[0]["loss"], summary["chance"] * 1.2)
        self.assertIsNotNone(summary["half_chance_at_step"])
        self.assertLess(summary["final_loss"], 1.0)


if __name__ == "__main__":
    unittest.main()

"""The swap probe (training/copy_probe.py) against two stand-in models whose behaviour is known: one that copies the
name its context holds, one that names its favourite whatever the context says."""

import unittest

import torch

from training.copy_probe import probe, token_texts

VOCAB = 300
NAMES = {"a": 10, "b": 11, "c": 12}


def copier(rows: torch.Tensor) -> torch.Tensor:
    """Logits that put the probed name found in each row's context first."""
    logits = torch.zeros(rows.shape[0], rows.shape[1], VOCAB)
    for r, row in enumerate(rows.tolist()):
        name = next(t for t in row if t in NAMES.values())
        logits[r, -1, name] = 20.0
    return logits


def favourite(rows: torch.Tensor) -> torch.Tensor:
    logits = torch.zeros(rows.shape[0], rows.shape[1], VOCAB)
    logits[:, -1, NAMES["b"]] = 20.0
    return logits


def episode(name_id: int) -> dict:
    # context: 5 6 <name> 7 | learned: 8 <name> 9
    ids = [5, 6, name_id, 7, 8, name_id, 9]
    return {"ids": ids, "mask": "0000111"}


class CopyProbeTest(unittest.TestCase):
    episodes = [episode(NAMES["a"]), episode(NAMES["c"]), {"ids": [5, 6, 7, 8], "mask": "0011"}, episode(NAMES["b"])]

    def test_a_model_that_copies_follows_every_swap(self):
        result = probe(copier, self.episodes, NAMES, limit=10)
        self.assertEqual(result["episodes"], 3)  # the episode without a probed name is passed over
        self.assertEqual(result["copy_rate"], 1.0)
        for stats in result["names"].values():
            self.assertEqual((stats["swaps"], stats["argmax_copies"]), (3, 3))
            self.assertGreater(stats["mean_p"], 0.99)

    def test_a_model_with_a_favourite_copies_only_when_the_context_says_its_favourite(self):
        result = probe(favourite, self.episodes, NAMES, limit=10)
        self.assertAlmostEqual(result["copy_rate"], 1 / 3, places=4)
        self.assertEqual(result["names"]["b"]["argmax_copies"], 3)
        self.assertEqual(result["names"]["a"]["argmax_copies"], 0)
        self.assertLess(result["names"]["a"]["mean_p"], 0.01)

    def test_limit_and_a_name_not_in_the_context(self):
        self.assertEqual(probe(copier, self.episodes, NAMES, limit=1)["episodes"], 1)
        # The call names a file the context never did: nothing to copy, so not probed.
        self.assertEqual(probe(copier, [{"ids": [5, 6, 7, 8, NAMES["a"]], "mask": "00001"}], NAMES, limit=10)["episodes"], 0)

    def test_token_texts_spell_merges_in_bytes(self):
        # GPT-2's alphabet: 'Ġ' stands for the space byte.
        texts = token_texts([("/", "s"), ("Ġ", "x")])
        self.assertEqual((texts[265], texts[266], texts[47]), ("/s", " x", "/"))


if __name__ == "__main__":
    unittest.main()

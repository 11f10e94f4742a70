"""The training pipeline at a tiny size: the prefix path is the plain forward pass, the weights file round-trips,
and a few steps on a tiny dataset make the loss fall (python3 -m unittest discover -s training/tests -t .)."""

from __future__ import annotations

import hashlib
import json
import random
import tempfile
import unittest
from pathlib import Path

import torch

from training import train, weights_file
from training.data import Episode, copy_targets, epoch_batch_count, epoch_batches, load_episodes, with_slips
from training.model import ALLOWED_IDS, SIZES, Decoder, apply_rope, rotate_half

torch.set_num_threads(2)


def encode(text: str) -> list[int]:
    markers = {"<|im_start|>": 257, "<|im_end|>": 258}
    ids, i = [], 0
    while i < len(text):
        marker = next((m for m in markers if text.startswith(m, i)), None)
        if marker:
            ids.append(markers[marker])
            i += len(marker)
        else:
            ids.extend(text[i].encode())
            i += 1
    return ids


def write_episodes(path: Path, count: int, env: str = "toy") -> None:
    """Episodes of a task a tiny model learns in a few steps: repeat the prompt's word."""
    words = ["left", "right", "up", "down", "view"]
    with open(path, "w") as f:
        for i in range(count):
            word = words[i % len(words)]
            prompt = encode(f"<|im_start|>user\nSay {word}.<|im_end|>\n<|im_start|>assistant\n")
            answer = encode(f"<action>{word}</action><|im_end|>")
            f.write(json.dumps({"env": env, "idx": i, "ids": prompt + answer, "mask": "0" * len(prompt) + "1" * len(answer)}) + "\n")


class ModelTest(unittest.TestCase):
    def test_the_shared_prefix_path_gives_the_plain_forward_pass(self):
        torch.manual_seed(0)
        model = Decoder(SIZES["tiny"])
        rows = torch.randint(0, 256, (3, 20))
        rows[:, :12] = rows[0, :12]
        full = model(rows)
        split = model.forward_with_prefix(rows[0, :12], rows[:, 12:])
        self.assertLess((full[:, 12:] - split).abs().max().item(), 1e-4)

    def test_rope_rotates_half_the_hugging_face_way(self):
        x = torch.arange(4.0)
        self.assertEqual(rotate_half(x).tolist(), [-2.0, -3.0, 0.0, 1.0])
        self.assertTrue(torch.equal(apply_rope(x, torch.ones(4), torch.zeros(4)), x))

    def test_query_head_h_reads_kv_head_h_over_g(self):
        torch.manual_seed(1)
        model = Decoder(SIZES["tiny"])  # 4 heads, 2 KV heads: heads 0, 1 read KV head 0; heads 2, 3 KV head 1
        layer, s = model.layers[0], 5
        x = torch.randn(1, s, model.architecture.hidden_size)
        cos, sin = model.rope.cos_sin(torch.arange(s))
        mask = torch.full((s, s), float("-inf")).triu(1)[None, None]
        out, _ = layer(x, cos, sin, None, mask)
        # The same layer head by head, each query head h with KV head h // 2.
        d, normed = layer.head_dim, layer.input_layernorm(x)[0]
        q = layer.q_proj(normed).view(s, 4, d).transpose(0, 1)
        k = layer.k_proj(normed).view(s, 2, d).transpose(0, 1)
        v = layer.v_proj(normed).view(s, 2, d).transpose(0, 1)
        heads = []
        for h in range(4):
            qh, kh = apply_rope(q[h], cos, sin), apply_rope(k[h // 2], cos, sin)
            heads.append(torch.softmax(qh @ kh.T / d**0.5 + mask[0, 0], -1) @ v[h // 2])
        attended = x[0] + layer.o_proj(torch.cat(heads, dim=-1))
        post = layer.post_attention_layernorm(attended)
        expected = attended + layer.down_proj(torch.nn.functional.silu(layer.gate_proj(post)) * layer.up_proj(post))
        self.assertLess((out[0] - expected).abs().max().item(), 1e-5)


class WeightsFileTest(unittest.TestCase):
    def test_round_trips_untied_and_tied(self):
        for size in ("tiny",):
            for tie in (False, True):
                arch = SIZES[size].__class__(**{**SIZES[size].to_config(), "tie_word_embeddings": tie})
                torch.manual_seed(2)
                model = Decoder(arch)
                with tempfile.TemporaryDirectory() as tmp:
                    path = Path(tmp) / "w.safetensors"
                    weights_file.save(path, model, {"steps": 1})
                    loaded, metadata = weights_file.load(path)
                ids = torch.randint(0, 256, (1, 9))
                self.assertTrue(torch.equal(model(ids), loaded(ids)))
                self.assertEqual(json.loads(metadata["training"]), {"steps": 1})
                self.assertEqual(json.loads(metadata["config"])["tie_word_embeddings"], tie)


class TrainTest(unittest.TestCase):
    def test_batches_share_the_prompt_prefix_and_learn_only_masked_tokens(self):
        with tempfile.TemporaryDirectory() as tmp:
            write_episodes(Path(tmp) / "train.jsonl", 10)
            episodes, stats = load_episodes(Path(tmp) / "train.jsonl", 4096)
        self.assertEqual(stats["episodes"], 10)
        batches = epoch_batches(episodes, 4, 1_000_000, seed=0, epoch=0)
        self.assertEqual(sum(b.suffixes.shape[0] for b in batches), 10)
        for b in batches:
            self.assertGreaterEqual(b.prefix.shape[0], 10)  # "<|im_start|>user\nSay " at least
            self.assertEqual(b.learned, int((b.targets != -100).sum()))
        self.assertEqual(sum(b.learned for b in batches), sum(e.mask.count("1") for e in episodes))

    def test_context_after_the_prefix_is_a_second_target_and_mistakes_are_neither(self):
        prompt = encode("<|im_start|>user\nSay up.<|im_end|>\n<|im_start|>assistant\n")
        mistake, answer = encode("<action>dwn</action>"), encode("<action>up</action>")
        observation = encode("<|im_start|>user\nInvalid move.<|im_end|>\n<|im_start|>assistant\n")
        rows = [  # one that answered right, one that erred first and recovered
            (prompt + answer + observation + answer, "0" * len(prompt) + "1" * len(answer) + "0" * len(observation) + "1" * len(answer)),
            (prompt + mistake + observation + answer, "0" * len(prompt) + "2" * len(mistake) + "0" * len(observation) + "1" * len(answer)),
        ]
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "train.jsonl"
            path.write_text("".join(json.dumps({"env": "toy", "idx": i, "ids": ids, "mask": mask}) + "\n" for i, (ids, mask) in enumerate(rows)))
            episodes, _ = load_episodes(path, 4096)
            path.write_text(json.dumps({"env": "toy", "idx": 7, "ids": rows[1][0], "mask": rows[1][1].replace("2", "x")}) + "\n")
            with self.assertRaisesRegex(ValueError, "toy#7: mask characters other than 0, 1, 2 and 3"):
                load_episodes(path, 4096)
        [batch] = epoch_batches(episodes, 4, 1_000_000, seed=0, epoch=0)
        self.assertEqual(batch.prefix.shape[0], len(prompt) - 1)  # up to the first learned target's position
        allowed = [t for t in observation if t in ALLOWED_IDS]
        by_row = {tuple(batch.suffixes[r, 1 : 1 + len(answer)].tolist()): r for r in range(2)}
        right, erred = by_row[tuple(answer)], by_row[tuple(mistake[: len(answer)])]
        self.assertEqual([int(t) for t in batch.targets[right] if t != -100], answer + answer)
        self.assertEqual([int(t) for t in batch.targets[erred] if t != -100], answer)  # not the mistake
        self.assertEqual([int(t) for t in batch.context[right] if t != -100], allowed)
        self.assertEqual([int(t) for t in batch.context[erred] if t != -100], allowed)  # nor as context
        torch.manual_seed(0)
        model = Decoder(SIZES["tiny"])
        loss, _, plain = train.batch_loss(model, batch, True, 0.0)
        _, _, weighted = train.batch_loss(model, batch, True, 0.5)
        self.assertEqual(plain.item(), loss.item())
        self.assertGreater(weighted.item(), loss.item() + 0.1)

    def test_a_learners_malformed_turn_is_made_less_likely_and_never_learned(self):
        prompt = encode("<|im_start|>user\nSolve.<|im_end|>\n<|im_start|>assistant\n")
        good = encode('<tool_call>{"name": "write_file", "arguments": {"path": "a", "content": "b"}}</tool_call>') + [258]
        slip = encode('<tool_call>{"name": "write_file", "arguments": {"path": "a"}}</tool_call>') + [258]
        observation = encode("\n<|im_start|>user\nok<|im_end|>\n<|im_start|>assistant\n")
        rows = [
            # The oracle's episode (learned), and one whose first turn was the learner's slip (mark 3).
            Episode("toy", prompt + good, "0" * len(prompt) + "1" * len(good)),
            Episode("toy", prompt + slip + observation + good, "0" * len(prompt) + "3" * len(slip) + "0" * len(observation) + "1" * len(good)),
        ]
        self.assertEqual(rows[1].first_learned, len(prompt))
        [batch] = epoch_batches(rows, 4, 1_000_000, seed=0, epoch=0)
        self.assertEqual(batch.slip_tokens, len(slip))
        slipped = next(r for r in range(2) if int((batch.slips[r] != -100).sum()) > 0)
        self.assertEqual([int(t) for t in batch.slips[slipped] if t != -100], slip)
        self.assertEqual([int(t) for t in batch.targets[slipped] if t != -100], good)  # the slip is never a target
        torch.manual_seed(0)
        model = Decoder(SIZES["tiny"])
        loss, _, plain = train.batch_loss(model, batch, True)
        self.assertEqual(plain.item(), loss.item())  # weight 0: the slip changes nothing

        def slip_log_prob(m: Decoder) -> float:
            with torch.no_grad():
                logits = m.forward_with_prefix(batch.prefix, batch.suffixes, False)
                return train.slip_log_probs(logits.reshape(-1, logits.shape[-1]), batch.slips.reshape(-1)).sum().item()

        def trained(negative_weight: float) -> Decoder:
            torch.manual_seed(0)
            m = Decoder(SIZES["tiny"])
            optimizer = torch.optim.AdamW(m.parameters(), lr=3e-3)
            for _ in range(30):
                _, _, objective = train.batch_loss(m, batch, True, 0.0, negative_weight, 0.0)
                optimizer.zero_grad()
                objective.backward()
                optimizer.step()
            return m

        # The good turn and the slip share their first tokens: learning the good turn alone makes them likelier too;
        # the negative term makes the slip, as a whole, far less likely than learning alone leaves it.
        self.assertLess(slip_log_prob(trained(1.0)), slip_log_prob(trained(0.0)) - 5.0)
        # A slip the model writes greedily (every token its argmax) is left alone: where the model's likeliest token
        # was written, the turn did not go wrong by sampling.
        greedy = list(prompt)
        with torch.no_grad():
            for _ in range(8):
                greedy.append(int(model(torch.tensor([greedy]))[0, -1].argmax()))
        [argmax_batch] = epoch_batches([Episode("toy", greedy, "0" * len(prompt) + "3" * 8)], 4, 1_000_000, seed=0, epoch=0)
        self.assertEqual(train.batch_loss(model, argmax_batch, True, 0.0, 1.0, 0.0)[2].item(), 0.0)
        # A batch of slips alone: no learned token, a loss of 0, an objective that still pushes.
        [only] = epoch_batches([Episode("toy", prompt + slip, "0" * len(prompt) + "3" * len(slip))], 4, 1_000_000, seed=0, epoch=0)
        self.assertEqual(only.learned, 0)
        loss_only, _, objective_only = train.batch_loss(model, only, True, 0.0, 1.0, 0.0)
        self.assertEqual(loss_only.item(), 0.0)
        self.assertLess(objective_only.item(), 0.0)
        floored = train.batch_loss(model, batch, True, 0.0, 1.0, 0.999)[2]
        self.assertAlmostEqual(floored.item(), loss.item(), places=5)  # every slip token below the floor: left alone

    def test_copy_targets_are_the_learned_tokens_only_the_tasks_text_predicts_and_weigh_copy_weight_times(self):
        # The system turn names the call's format; the user turn names the task's file; the call copies both.
        prompt = encode('<|im_start|>system\nCall {"name": "read"}.<|im_end|>\n<|im_start|>user\nRead /w/svc.ini and /w/aa.<|im_end|>\n<|im_start|>assistant\n')
        call = encode('{"name": "read", "path": "/w/svc.ini"}') + [258]
        episode = Episode("toy", prompt + call, "0" * len(prompt) + "1" * len(call))
        marked = sorted(copy_targets(episode))
        text = lambda ids: bytes(i for i in ids if i < 256).decode()
        # `s` after `/`, `v` after `s`, … of `svc.ini` (pairs the user turn holds once); not `/w/` (twice there), not
        # the format (the system turn's), not the end marker.
        self.assertEqual(text(episode.ids[t] for t in marked), "svc.ini")
        self.assertEqual(copy_targets(Episode("toy", prompt, "0" * len(prompt))), set())
        [plain] = epoch_batches([episode], 4, 1_000_000, seed=0, epoch=0)
        [weighted] = epoch_batches([episode], 4, 1_000_000, seed=0, epoch=0, copy_weight=5.0)
        self.assertIsNone(plain.weights)
        self.assertEqual(weighted.copy_tokens, len(marked))
        self.assertEqual(int((weighted.weights == 5.0).sum()), len(marked))
        # Each weighted position predicts a marked token.
        shared = weighted.prefix.shape[0]
        for r, c in (weighted.weights == 5.0).nonzero().tolist():
            self.assertIn(shared + c + 1, marked)
        torch.manual_seed(0)
        model = Decoder(SIZES["tiny"])
        loss, _, objective = train.batch_loss(model, weighted, True)
        plain_loss, _, plain_objective = train.batch_loss(model, plain, True)
        self.assertAlmostEqual(loss.item(), plain_loss.item(), places=5)  # the reported loss is unweighted
        self.assertAlmostEqual(plain_objective.item(), plain_loss.item(), places=5)
        with torch.no_grad():
            logits = model.forward_with_prefix(weighted.prefix, weighted.suffixes, False)
            per_token = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), weighted.targets.reshape(-1), ignore_index=-100, reduction="none")
        copies = per_token[(weighted.weights == 5.0).reshape(-1)].sum().item()
        self.assertAlmostEqual(objective.item(), plain_loss.item() + 4.0 * copies / weighted.learned, places=4)

    def test_slips_touch_words_only_are_never_learned_and_leave_the_rest_of_the_turn_learned(self):
        prompt = encode("<|im_start|>user\nSolve.<|im_end|>\n<|im_start|>assistant\n")
        turn = encode('<tool_call>\n{"name": "read_file", "arguments": {"path": "/workspace/service.ini"}}\n</tool_call>') + [258]
        calc = encode("[12, 7, diff]<call: calculator>") + [258]
        observation = encode("\n<|im_start|>user\n<result>5</result><|im_end|>\n<|im_start|>assistant\n")
        ids = prompt + turn + observation + calc
        mask = "0" * len(prompt) + "1" * len(turn) + "0" * len(observation) + "1" * len(calc)
        episode = Episode("toy", ids, mask)
        self.assertIs(with_slips(episode, 0.0, random.Random(0)), episode)
        kinds = set()
        rng = random.Random(0)
        for _ in range(300):
            slipped = with_slips(episode, 1.0, rng)
            self.assertEqual(len(slipped.ids), len(slipped.mask))
            self.assertEqual(slipped.mask.count("2"), 2)  # one slip in each learned turn
            self.assertEqual(slipped.ids[: len(prompt)], prompt)
            kinds.add(len(slipped.ids) - len(ids))
            for i, mark in enumerate(slipped.mask):
                if mark == "2":
                    # A word's byte, between a learned byte and a learned word's byte; punctuation is never touched.
                    self.assertEqual(slipped.mask[i - 1] + slipped.mask[i + 1], "11")
                    self.assertTrue(chr(slipped.ids[i]).isalnum() or chr(slipped.ids[i]) in "_./-")
            text = bytes(t for t in slipped.ids if t < 256).decode()
            self.assertEqual(text.count('"}}'), 1)
            self.assertIn("]<", text)
            # Never a learned letter too many or too few after a repeated one: `diff` loses or gains no `f` of a pair.
            self.assertNotRegex(text, r"dif\]|difff")
        self.assertEqual(kinds, {-2, -1, 0, 1, 2})  # drops, doubles and replacements, in either turn
        # In each epoch's batches, from the same groups: the slips change the learned tokens, not the batches.
        many = [Episode("toy", ids, mask) for _ in range(8)]
        plain, slipped = epoch_batches(many, 4, 1_000_000, 0, 0), epoch_batches(many, 4, 1_000_000, 0, 0, 0.5)
        self.assertEqual([b.suffixes.shape[0] for b in plain], [b.suffixes.shape[0] for b in slipped])
        self.assertLess(sum(b.learned for b in slipped), sum(b.learned for b in plain))

    def test_a_few_steps_make_the_loss_fall_and_export_a_weights_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            data, out = Path(tmp) / "data", Path(tmp) / "out"
            data.mkdir()
            write_episodes(data / "train.jsonl", 40)
            write_episodes(data / "held_out.jsonl", 10)
            code = train.main(["--data", str(data), "--out", str(out), "--size", "tiny", "--steps", "40", "--lr", "1e-2", "--warmup", "5", "--batch-size", "8", "--log-every", "10", "--eval-every", "40", "--checkpoint-every", "20"])
            self.assertEqual(code, 0)
            summary = json.loads((out / "train.json").read_text())
            losses = [h["loss"] for h in summary["history"]]
            self.assertLess(losses[-1], 0.5 * losses[0])
            self.assertLess(summary["held_out"]["loss"], losses[0])
            # --device auto: a CUDA GPU when torch sees one, else the CPU; the summary says which.
            self.assertEqual(summary["device"], "cuda" if torch.cuda.is_available() else "cpu")
            model, metadata = weights_file.load(out / "weights.safetensors")
            self.assertEqual(json.loads(metadata["training"])["steps"], 40)
            # A resumed run continues from the checkpoint's step, its loss history kept.
            code = train.main(["--data", str(data), "--out", str(out), "--size", "tiny", "--steps", "45", "--resume", "--log-every", "5", "--eval-every", "100"])
            resumed = json.loads((out / "train.json").read_text())
            self.assertEqual(resumed["steps"], 45)
            self.assertEqual([h["step"] for h in resumed["history"]], [10, 20, 30, 40, 45])
            # --export-only writes the checkpoint's weights (a look at a run under way), the same as the run's own; the
            # checkpoint knows its size (no --size needed).
            self.assertEqual(train.main(["--data", str(data), "--out", str(out), "--export-only", str(Path(tmp) / "look.safetensors")]), 0)
            look, _ = weights_file.load(Path(tmp) / "look.safetensors")
            final, _ = weights_file.load(out / "weights.safetensors")
            for (name, a), (_, b) in zip(look.state_dict().items(), final.state_dict().items()):
                self.assertTrue(torch.equal(a, b), name)

    def test_a_run_stopped_by_its_time_limit_resumes_to_the_same_weights(self):
        # A second stage resumes only from the weights it started from: a first stage resumed after its time limit
        # must not train a step more (it did, and every --resume then started the second stage afresh).
        with tempfile.TemporaryDirectory() as tmp:
            data, out = Path(tmp) / "data", Path(tmp) / "out"
            data.mkdir()
            write_episodes(data / "train.jsonl", 40)
            common = ["--data", str(data), "--out", str(out), "--size", "tiny", "--steps", "100000", "--time-limit", "0.3", "--batch-size", "8", "--log-every", "5", "--eval-every", "100000"]
            self.assertEqual(train.main(common), 0)
            before = json.loads((out / "train.json").read_text())
            self.assertTrue(before["stopped_early"])
            first = (out / "weights.safetensors").read_bytes()
            self.assertEqual(train.main([*common, "--resume"]), 0)
            self.assertEqual(json.loads((out / "train.json").read_text())["steps"], before["steps"])
            self.assertEqual((out / "weights.safetensors").read_bytes(), first)

    def test_epochs_of_different_lengths_follow_one_another_and_a_resumed_step_finds_its_epoch(self):
        # Episodes of many lengths under a small attention budget: where the shuffle puts the long ones decides
        # where batches are cut, so epochs have different batch counts (a run once indexed epoch 1 by epoch 0's count
        # and stopped with an IndexError in the middle of a second stage).
        with tempfile.TemporaryDirectory() as tmp:
            data = Path(tmp) / "data"
            data.mkdir()
            rng = random.Random(1)
            with open(data / "train.jsonl", "w") as f:
                for i in range(64):
                    prompt = encode(f"<|im_start|>user\nSay {'go ' * rng.randint(1, 40)}.<|im_end|>\n<|im_start|>assistant\n")
                    answer = encode("<action>go</action><|im_end|>")
                    f.write(json.dumps({"env": "toy", "idx": i, "ids": prompt + answer, "mask": "0" * len(prompt) + "1" * len(answer)}) + "\n")
            episodes, _ = load_episodes(data / "train.jsonl", 4096)
            budget = 30000
            counts = [epoch_batch_count(episodes, 2, budget, 0, e) for e in range(3)]
            self.assertEqual(counts[1], len(epoch_batches(episodes, 2, budget, 0, 1)))
            self.assertLess(counts[1], counts[0])  # the case this test is about
            steps = counts[0] + counts[1] + 1  # through the shorter epoch 1 into epoch 2's first batch
            self.assertEqual(train.locate_step(0, counts.__getitem__), (0, 0))
            self.assertEqual(train.locate_step(counts[0], counts.__getitem__), (1, counts[0]))
            self.assertEqual(train.locate_step(steps - 1, counts.__getitem__), (2, counts[0] + counts[1]))
            # A learning rate of 0: each step's loss depends on its batch alone, so two runs compare batch by batch.
            common = ["--data", str(data), "--size", "tiny", "--batch-size", "2", "--attention-budget", str(budget), "--lr", "0", "--log-every", "1", "--eval-every", "1000"]
            whole, parts = Path(tmp) / "whole", Path(tmp) / "parts"
            self.assertEqual(train.main([*common, "--out", str(whole), "--steps", str(steps)]), 0)
            history = json.loads((whole / "train.json").read_text())["history"]
            self.assertEqual([(h["step"], h["epoch"]) for h in history][-1], (steps, 2))
            # Stopped inside epoch 1, then resumed: the same batches from there on.
            self.assertEqual(train.main([*common, "--out", str(parts), "--steps", str(counts[0] + 3)]), 0)
            self.assertEqual(train.main([*common, "--out", str(parts), "--steps", str(steps), "--resume"]), 0)
            resumed = json.loads((parts / "train.json").read_text())["history"]
            # The whole history: the first part's steps come from the checkpoint.
            self.assertEqual([h["loss"] for h in resumed], [h["loss"] for h in history])

    def test_a_second_stage_starts_from_the_first_stages_weights(self):
        with tempfile.TemporaryDirectory() as tmp:
            data, first, second = Path(tmp) / "data", Path(tmp) / "first", Path(tmp) / "second"
            data.mkdir()
            write_episodes(data / "train.jsonl", 40)
            common = ["--data", str(data), "--size", "tiny", "--batch-size", "8", "--log-every", "5", "--eval-every", "100"]
            self.assertEqual(train.main([*common, "--out", str(first), "--steps", "40", "--lr", "1e-2", "--warmup", "5"]), 0)
            start = json.loads((first / "train.json").read_text())["history"]
            # A learning rate of 0 leaves the weights as they were: the second stage's loss is the first's at its end.
            self.assertEqual(train.main([*common, "--out", str(second), "--steps", "5", "--lr", "0", "--init", str(first / "weights.safetensors")]), 0)
            summary = json.loads((second / "train.json").read_text())
            self.assertLess(summary["history"][0]["loss"], 0.5 * start[0]["loss"])
            # Named portably (a temporary folder is outside the project: the file's name), with its SHA-256.
            self.assertEqual(summary["init"], "weights.safetensors")
            self.assertEqual(summary["init_sha256"], hashlib.sha256((first / "weights.safetensors").read_bytes()).hexdigest())
            self.assertEqual(train.portable_name(str(train.PROJECT / "training" / "train.py")), "training/train.py")
            a, first_metadata = weights_file.load(first / "weights.safetensors")
            b, second_metadata = weights_file.load(second / "weights.safetensors")
            # The second stage's file says how the weights it started from were trained.
            self.assertEqual(json.loads(second_metadata["training"])["first_stage"], json.loads(first_metadata["training"]))
            for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items()):
                self.assertTrue(torch.equal(x, y), name)
            # Resuming a second stage whose starting weights changed since (its first stage run again) starts it afresh:
            # its checkpoint came from the old weights.
            self.assertEqual(train.main([*common, "--out", str(first), "--steps", "45", "--lr", "1e-2", "--warmup", "5", "--resume"]), 0)
            self.assertEqual(train.main([*common, "--out", str(second), "--steps", "5", "--lr", "0", "--init", str(first / "weights.safetensors"), "--resume"]), 0)
            again = json.loads((second / "train.json").read_text())
            self.assertEqual([h["step"] for h in again["history"]], [5])
            self.assertEqual(again["init_sha256"], hashlib.sha256((first / "weights.safetensors").read_bytes()).hexdigest())
            # Weights of another architecture are refused, naming the file.
            self.assertEqual(train.main([*common, "--out", str(second), "--steps", "5", "--size", "trained", "--init", str(first / "weights.safetensors")]), 2)
            self.assertEqual(train.main([*common, "--out", str(second), "--steps", "5", "--init", str(Path(tmp) / "missing.safetensors")]), 2)

    def test_a_vocabulary_with_merges_sizes_the_model_its_shaping_and_its_file(self):
        merges = [["u", "p"], ["d", "own"], ["o", "w"], ["ow", "n"]]  # merge i is token 265 + i; 266 is "down"
        allowed = [*ALLOWED_IDS, 265, 266, 267]  # 268 ("own") is made blocked here, to see it dropped
        with tempfile.TemporaryDirectory() as tmp:
            data, out = Path(tmp) / "data", Path(tmp) / "out"
            data.mkdir()
            prompt = encode("<|im_start|>user\nSay it.<|im_end|>\n<|im_start|>assistant\n")
            rows = [prompt + encode("<action>") + [265 + i % 2] + encode("</action>") + [258] for i in range(16)]
            rows.append(prompt + [268, 258])
            (data / "train.jsonl").write_text("".join(json.dumps({"env": "toy", "idx": i, "ids": r, "mask": "0" * len(prompt) + "1" * (len(r) - len(prompt))}) + "\n" for i, r in enumerate(rows)))
            manifest = {"seed": 0, "error_rate": 0, "train_dataset_seeds": "0…1", "held_out_dataset_seeds": "none"}
            (data / "data.json").write_text(json.dumps({**manifest, "vocabulary": {"size": 269, "merges": merges, "allowed_ids": allowed}}))
            common = ["--data", str(data), "--size", "tiny", "--batch-size", "8", "--log-every", "5", "--eval-every", "100"]
            self.assertEqual(train.main([*common, "--out", str(out), "--steps", "10", "--lr", "1e-2", "--warmup", "2"]), 0)
            summary = json.loads((out / "train.json").read_text())
            self.assertGreater(summary["history"][0]["loss"], summary["history"][-1]["loss"])
            self.assertEqual(summary["data"]["vocabulary"], {"size": 269, "merges": 4})
            model, metadata = weights_file.load(out / "weights.safetensors")
            self.assertEqual(model.architecture.vocab_size, 269)
            self.assertEqual(json.loads(metadata["vocabulary"])["merges"], merges)  # weights-file.ts reads them from here
            self.assertEqual(model.bias[266].item(), 0.0)
            self.assertEqual(model.bias[268].item(), -1e4)
            self.assertEqual(model(torch.tensor([prompt])).shape[-1], 269)
            # The blocked merged token was not a target.
            _, stats = load_episodes(data / "train.jsonl", 4096, frozenset(allowed))
            self.assertEqual(stats["blocked_targets"], 1)
            # Byte-level weights cannot start a run on these ids, nor slips change their bytes.
            byte_level = Path(tmp) / "byte-level.safetensors"
            weights_file.save(byte_level, Decoder(SIZES["tiny"]))
            self.assertEqual(train.main([*common, "--out", str(Path(tmp) / "b"), "--steps", "2", "--init", str(byte_level)]), 2)
            self.assertEqual(train.main([*common, "--out", str(Path(tmp) / "c"), "--steps", "2", "--slip-rate", "0.1"]), 2)
            (data / "data.json").write_text(json.dumps({**manifest, "vocabulary": {"size": 300, "merges": merges, "allowed_ids": allowed}}))
            self.assertEqual(train.main([*common, "--out", str(Path(tmp) / "d"), "--steps", "2"]), 2)

    def test_a_time_limit_decays_the_learning_rate_to_zero_by_then(self):
        args = train.parse_args(["--data", "d", "--out", "o", "--steps", "1000", "--warmup", "10", "--time-limit", "100"])
        self.assertAlmostEqual(train.learning_rate(500, args, seconds=0.0), train.learning_rate(500, train.parse_args(["--data", "d", "--out", "o", "--steps", "1000", "--warmup", "10"])))
        self.assertLess(train.learning_rate(20, args, seconds=50.0), 0.51 * args.lr)  # half the time: half way down
        self.assertEqual(train.learning_rate(20, args, seconds=100.0), 0.0)


if __name__ == "__main__":
    unittest.main()

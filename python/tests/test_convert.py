"""convert.py: EnvironmentReturn shapes to JSON, tensors, paths of errors, metrics, the post_process batch."""

import dataclasses
import json
import math
import unittest
from typing import Any, NamedTuple, Optional

from rollout_lab_bridge import convert
from rollout_lab_bridge.convert import ConversionError

from .helpers import HAS_TORCH, has_module

OBS = [{"role": "environment", "content": "a"}, {"role": "environment", "content": "b"}]
EXPECTED = {
    "observations": OBS,
    "metadata": [{"turn": 1}, None],
    "next_stop_strings": [["</a>"], None],
    "rewards": [1.0, 0.0],
    "terminateds": [False, True],
    "answers": ["x", None],
}


class Return6(NamedTuple):
    observations: Any
    metadata: Any
    next_stop_strings: Any
    rewards: Any
    terminateds: Any
    answers: Optional[Any]


class Return5(NamedTuple):
    observations: Any
    metadata: Any
    next_stop_strings: Any
    rewards: Any
    terminateds: Any


@dataclasses.dataclass
class ReturnData:
    observations: Any
    metadata: Any
    next_stop_strings: Any
    rewards: Any
    terminateds: Any
    answers: Any = None


class Foo:
    pass


def args():
    return (OBS, [{"turn": 1}, None], [("</a>",), None], [1, 0.0], [False, 1], ["x", None])


class ReturnShapes(unittest.TestCase):
    def test_namedtuple(self):
        self.assertEqual(convert.environment_return_to_json(Return6(*args())), EXPECTED)

    def test_namedtuple_without_answers(self):
        out = convert.environment_return_to_json(Return5(*args()[:5]))
        self.assertEqual(out, dict(EXPECTED, answers=None))

    def test_dataclass(self):
        self.assertEqual(convert.environment_return_to_json(ReturnData(*args())), EXPECTED)

    def test_dict(self):
        self.assertEqual(convert.environment_return_to_json(dict(zip(convert.FIELDS, args()))), EXPECTED)

    def test_dict_without_answers(self):
        fields = dict(zip(convert.FIELDS[:5], args()))
        self.assertIsNone(convert.environment_return_to_json(fields)["answers"])

    def test_plain_tuples(self):
        self.assertEqual(convert.environment_return_to_json(tuple(args())), EXPECTED)
        self.assertEqual(convert.environment_return_to_json(tuple(args()[:5])), dict(EXPECTED, answers=None))
        self.assertEqual(convert.environment_return_to_json(list(args())), EXPECTED)

    def test_wrong_shapes(self):
        with self.assertRaisesRegex(ConversionError, "tuple of 3 values"):
            convert.environment_return_to_json((1, 2, 3))
        with self.assertRaisesRegex(ConversionError, "expected an EnvironmentReturn"):
            convert.environment_return_to_json("nothing")
        with self.assertRaisesRegex(ConversionError, "has no field 'terminateds'"):
            convert.environment_return_to_json(dict(zip(convert.FIELDS[:4], args())))
        with self.assertRaisesRegex(ConversionError, "has the field 'reward'"):
            convert.environment_return_to_json(dict(zip(convert.FIELDS, args()), reward=[1]))

    def test_nan_reward_names_the_path(self):
        values = list(args())
        values[3] = [1.0, math.nan]
        with self.assertRaises(ConversionError) as caught:
            convert.environment_return_to_json(tuple(values))
        self.assertEqual(str(caught.exception), "rewards[1] is nan, not a finite number")
        self.assertEqual(caught.exception.path, "rewards[1]")

    def test_infinity_in_metadata_names_the_path(self):
        values = list(args())
        values[1] = [{"scores": [0.0, math.inf]}, None]
        with self.assertRaisesRegex(ConversionError, r"^metadata\[0\]\.scores\[1\] is inf, not a finite number$"):
            convert.environment_return_to_json(tuple(values))

    def test_integer_beyond_javascript_numbers_names_the_path(self):
        # A seed of 2**62 + 1 would come back from the lab as 4611686018427388000: refused, not changed.
        values = list(args())
        values[1] = [{"seed": 2**62 + 1}, None]
        with self.assertRaisesRegex(ConversionError, r"^metadata\[0\]\.seed is 4611686018427387905, beyond the integers"):
            convert.environment_return_to_json(tuple(values))
        values[1] = [{"seed": 2**53 - 1, "low": -(2**53 - 1)}, None]
        self.assertEqual(convert.environment_return_to_json(tuple(values))["metadata"][0], {"seed": 2**53 - 1, "low": -(2**53 - 1)})

    def test_object_in_metadata_names_the_path(self):
        values = list(args())
        values[1] = [None, None, {"board": Foo()}]
        with self.assertRaises(ConversionError) as caught:
            convert.environment_return_to_json(tuple(values))
        self.assertEqual(str(caught.exception), "metadata[2].board: cannot send an object of type Foo as JSON")

    def test_metadata_deep_conversion(self):
        out = convert.to_json({"a": (1, (2, 3)), "b": {"odd key": [True, None]}}, "metadata[0]")
        self.assertEqual(out, {"a": [1, [2, 3]], "b": {"odd key": [True, None]}})
        with self.assertRaisesRegex(ConversionError, r'metadata\[0\]\.b\["odd key"\]: cannot send an object of '
                                                     r'type bytes'):
            convert.to_json({"b": {"odd key": b"x"}}, "metadata[0]")
        with self.assertRaisesRegex(ConversionError, r"metadata\[0\] has the key 1 \(int\): keys of a JSON object "
                                                     r"must be strings"):
            convert.to_json({1: "x"}, "metadata[0]")

    def test_rewards_components(self):
        self.assertEqual(convert.rewards_to_json({"format": [1, 0], "correct": (0.5, 1)}),
                         {"format": [1.0, 0.0], "correct": [0.5, 1.0]})
        with self.assertRaisesRegex(ConversionError, r"^rewards\.correct\[0\] is nan"):
            convert.rewards_to_json({"correct": [math.nan]})

    def test_rewards_errors(self):
        with self.assertRaisesRegex(ConversionError, r"rewards\[0\] is a list: .*dict of named components"):
            convert.rewards_to_json([[1.0, 2.0]])
        with self.assertRaisesRegex(ConversionError, r"rewards\[1\] is 'a' \(str\), not a number"):
            convert.rewards_to_json([1.0, "a"])
        with self.assertRaisesRegex(ConversionError, "expected a list"):
            convert.rewards_to_json(1.0)

    def test_terminateds(self):
        self.assertEqual(convert.terminateds_to_json([True, 0, 1.0, False]), [True, False, True, False])
        with self.assertRaisesRegex(ConversionError, r"terminateds\[1\] is 0\.5 \(float\): expected a boolean"):
            convert.terminateds_to_json([True, 0.5])

    def test_answers_and_stop_strings(self):
        self.assertIsNone(convert.answers_to_json(None))
        with self.assertRaisesRegex(ConversionError, r"answers\[0\] is 3 \(int\)"):
            convert.answers_to_json([3])
        self.assertIsNone(convert.stop_strings_to_json(None))
        with self.assertRaisesRegex(ConversionError, r"next_stop_strings\[0\]\[1\] is 5"):
            convert.stop_strings_to_json([["a", 5]])

    def test_dumps_refuses_nan(self):
        with self.assertRaises(ValueError):
            convert.dumps({"x": math.nan})
        self.assertEqual(json.loads(convert.dumps({"x": "é"})), {"x": "é"})
        # Text the lab sent with a lone surrogate (valid JSON there) goes back as the same escape, not an error.
        self.assertEqual(convert.dumps({"x": "\ud83c"}), '{"x": "\\ud83c"}')
        convert.dumps({"x": "\ud83c"}).encode("utf-8")


class Metrics(unittest.TestCase):
    def test_numbers(self):
        self.assertEqual(convert.metrics_to_json({"a": 1, "b": 0.5, "c": True}), {"a": 1, "b": 0.5, "c": 1})

    def test_not_a_number_names_the_key(self):
        with self.assertRaisesRegex(ConversionError, r'metrics\["text"\] is \'abc\' \(str\): a metric must be a '
                                                     r'number'):
            convert.metrics_to_json({"ok": 1, "text": "abc"})
        with self.assertRaisesRegex(ConversionError, r'metrics\["bad"\] is nan'):
            convert.metrics_to_json({"bad": math.nan})
        with self.assertRaisesRegex(ConversionError, "expected a dict"):
            convert.metrics_to_json([1])


class Batch(unittest.TestCase):
    def test_without_torch_columns_stay_lists(self):
        columns = {"total_reward": [1, 0.5], "done": [True, False], "names": ["a", "b"]}
        self.assertEqual(convert.batch_from_json(columns, None, None), columns)

    def test_batch_class(self):
        class Wrapper(dict):
            pass

        self.assertIsInstance(convert.batch_from_json({"a": [1]}, None, Wrapper), Wrapper)


@unittest.skipUnless(HAS_TORCH, "torch is not installed")
class TorchTensors(unittest.TestCase):
    def setUp(self):
        import torch
        self.torch = torch

    def test_return_with_tensors(self):
        torch = self.torch
        result = Return6(OBS, [{"t": torch.tensor([1, 2])}, {"x": torch.tensor(2.5), "p": (1, "a")}], None,
                         torch.tensor([1.0, 0.25], dtype=torch.float32), torch.tensor([True, False]), None)
        out = convert.environment_return_to_json(result)
        self.assertEqual(out["rewards"], [1.0, 0.25])
        self.assertEqual(out["terminateds"], [True, False])
        self.assertEqual(out["metadata"], [{"t": [1, 2]}, {"x": 2.5, "p": [1, "a"]}])
        self.assertIs(type(out["metadata"][1]["x"]), float)

    def test_float_terminateds_and_component_tensors(self):
        torch = self.torch
        self.assertEqual(convert.terminateds_to_json(torch.tensor([0.0, 1.0])), [False, True])
        self.assertEqual(convert.rewards_to_json({"a": torch.ones(2), "b": [0, 1]}), {"a": [1.0, 1.0], "b": [0.0, 1.0]})

    def test_2d_rewards(self):
        with self.assertRaisesRegex(ConversionError, r"rewards is a 2-D tensor \(shape \[3, 2\]\).*dict of named "
                                                     "components"):
            convert.rewards_to_json(self.torch.zeros(3, 2))

    def test_nan_in_tensor(self):
        with self.assertRaisesRegex(ConversionError, r"^rewards\[1\] is nan, not a finite number$"):
            convert.rewards_to_json(self.torch.tensor([0.0, float("nan")]))

    def test_metrics_tensors(self):
        self.assertEqual(convert.metrics_to_json({"m": self.torch.tensor(0.5)}), {"m": 0.5})
        with self.assertRaisesRegex(ConversionError, r'metrics\["v"\]'):
            convert.metrics_to_json({"v": self.torch.tensor([1.0, 2.0])})

    def test_batch_tensors(self):
        torch = self.torch
        batch = convert.batch_from_json({
            "total_reward": [1, 0.5], "done": [True, False], "names": ["a", "b"], "mixed": [1, True],
            "message_log": [[{"role": "user", "content": "x", "token_ids": [1, 2]}], [{"role": "user", "content": "y"}]],
        }, torch, None)
        self.assertEqual(batch["total_reward"].dtype, torch.float32)
        self.assertEqual(batch["done"].dtype, torch.bool)
        self.assertEqual(batch["names"], ["a", "b"])
        self.assertEqual(batch["mixed"], [1, True])
        self.assertEqual(batch["message_log"][0][0]["token_ids"].dtype, torch.int64)
        self.assertNotIn("token_ids", batch["message_log"][1][0])


@unittest.skipUnless(has_module("numpy"), "numpy is not installed")
class NumpyValues(unittest.TestCase):
    def test_numpy(self):
        import numpy as np
        self.assertEqual(convert.rewards_to_json(np.array([1.0, 2.0])), [1.0, 2.0])
        self.assertEqual(convert.to_json({"a": np.int64(3), "b": np.float32(0.5), "c": np.bool_(True)}, "m"),
                         {"a": 3, "b": 0.5, "c": True})
        with self.assertRaisesRegex(ConversionError, r"rewards is a 2-D tensor"):
            convert.rewards_to_json(np.zeros((2, 2)))
        self.assertEqual(convert.terminateds_to_json(np.array([True, False])), [True, False])

"""Dataset functions for --dataset."""

import random


def make_dataset(size, seed, config):
    rng = random.Random(seed)
    limit = (config or {}).get("max_number", 10)
    return [{"message_log": [{"role": "user", "content": f"guess {rng.randint(1, limit)}"}],
             "extra_env_info": {"i": i, "pair": (i, i)}, "idx": i} for i in range(size)]


def make_dataset_any(**kwargs):
    return [{"task_name": "own", "message_log": [], "extra_env_info": {"kwargs": sorted(kwargs)},
             "stop_strings": ["x"]}]


def make_dataset_task(task_name, size=1):
    return [{"message_log": [], "extra_env_info": {"seen_task": task_name}} for _ in range(size)]


def make_dataset_not_list(size):
    return {"size": size}


def make_dataset_raises(seed):
    raise KeyError("no such split")

"""Rewards as named components."""

from .interfaces import EnvironmentReturn


class ComponentsGame:
    """Two reward components: format and correctness."""

    def __init__(self, cfg):
        pass

    def step(self, message_log_batch, metadata):
        n = len(message_log_batch)
        return EnvironmentReturn([{"role": "environment", "content": "c"}] * n, [None] * n, [None] * n,
                                 {"format": [1.0] * n, "correct": [i % 2 for i in range(n)]}, [True] * n, ["x"] * n)

"""Environments that go wrong: one raising in step, some returning what cannot be sent."""

import math

from .interfaces import EnvironmentReturn


class Exploding:
    """Raises on a sample whose metadata has explode: true."""

    def __init__(self, cfg):
        pass

    def step(self, message_log_batch, metadata):
        for meta in metadata:
            check_board(meta)
        n = len(metadata)
        return EnvironmentReturn([{"role": "environment", "content": "ok"}] * n, [None] * n, None, [1.0] * n,
                                 [True] * n, None)


def check_board(meta):
    if meta and meta.get("explode"):
        raise ValueError("the board exploded")


class Foo:
    pass


class NaNReward(Exploding):
    def step(self, message_log_batch, metadata):
        return super().step(message_log_batch, metadata)._replace(rewards=[1.0, math.nan][:len(metadata)])


class BadMetadata(Exploding):
    def step(self, message_log_batch, metadata):
        return super().step(message_log_batch, metadata)._replace(
            metadata=[{"board": Foo()} for _ in metadata])


class NotAReturn(Exploding):
    def step(self, message_log_batch, metadata):
        return "nothing"

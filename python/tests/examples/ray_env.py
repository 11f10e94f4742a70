"""Ray actor classes, as NeMo RL writes its environments: with real Ray they run as actors, without it through the
bridge's stand-in ray module."""

import os
import threading

import ray

from .interfaces import EnvironmentInterface, EnvironmentReturn


@ray.remote
class CountingActor(EnvironmentInterface):
    """Counts its calls: state kept in the actor between calls."""

    def __init__(self, cfg):
        self.cfg = cfg
        self.calls = 0
        self.active = 0
        self.lock = threading.Lock()

    def step(self, message_log_batch, metadata):
        with self.lock:
            self.active += 1
            overlapping = self.active > 1
        try:
            self.calls += 1
            n = len(message_log_batch)
            return EnvironmentReturn(
                observations=[{"role": "environment", "content": f"call {self.calls}"} for _ in range(n)],
                metadata=[{"calls": self.calls, "overlapping": overlapping, "pid": os.getpid(),
                           "start": self.cfg.get("start", 0)} for _ in range(n)],
                next_stop_strings=None,
                rewards=[float(self.calls)] * n,
                terminateds=[False] * n,
                answers=None,
            )
        finally:
            with self.lock:
                self.active -= 1


@ray.remote(num_cpus=1, max_concurrency=1)
class FailingActor:
    """Raises on a sample whose metadata says explode."""

    def step(self, message_log_batch, metadata):
        if any(m and m.get("explode") for m in metadata):
            raise ValueError("the actor's board exploded")
        return ([{"role": "environment", "content": "fine"} for _ in metadata], metadata, None,
                [1.0 for _ in metadata], [True for _ in metadata], None)

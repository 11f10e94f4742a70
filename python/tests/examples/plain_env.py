"""A plain environment class returning lists (no torch, no Ray)."""

from .interfaces import EnvironmentInterface, EnvironmentReturn

STOP = ["</answer>"]


class EchoGame(EnvironmentInterface):
    """Say yes: reward 1 when the last assistant message says "yes".

    The game ends after the metadata's turn reaches max_turns (config, default 2).
    """

    def __init__(self, cfg):
        self.cfg = dict(cfg)
        self.max_turns = self.cfg.get("max_turns", 2)
        self.calls = 0

    def step(self, message_log_batch, metadata):
        self.calls += 1
        observations, next_metadata, rewards, terminateds, answers = [], [], [], [], []
        for log, meta in zip(message_log_batch, metadata):
            meta = dict(meta or {})
            last = log[-1]["content"] if log and log[-1]["role"] == "assistant" else ""
            said_yes = "yes" in last
            turn = meta.get("turn", 0) + 1
            done = said_yes or turn >= self.max_turns
            observations.append({"role": "environment", "content": self.cfg.get("greeting", "hi") + f" {turn}"})
            next_metadata.append(None if done else dict(meta, turn=turn, calls=self.calls))
            rewards.append(1.0 if said_yes else 0.0)
            terminateds.append(done)
            answers.append("yes" if said_yes else None)
        # mutate what was given: the bridge passes copies, the request is not affected
        if metadata and isinstance(metadata[0], dict):
            metadata[0]["mutated"] = True
        return EnvironmentReturn(observations, next_metadata, [STOP for _ in observations], rewards, terminateds,
                                 answers)


class HeldEcho(EchoGame):
    """EchoGame whose step waits for the test: ``entered`` is set when a step starts, ``release`` lets it end."""

    entered = None
    release = None

    def step(self, message_log_batch, metadata):
        HeldEcho.entered.set()
        HeldEcho.release.wait(30)
        return super().step(message_log_batch, metadata)


class NoArgs:
    """Takes no constructor arguments."""

    name = "custom_name"

    def __init__(self):
        self.made = True

    def step(self, message_log_batch, metadata):
        return {"observations": [{"role": "environment", "content": "noargs"} for _ in message_log_batch],
                "metadata": [None for _ in metadata], "next_stop_strings": None,
                "rewards": [0.5 for _ in metadata], "terminateds": [1 for _ in metadata]}


class SeesConfig:
    def __init__(self, cfg=None):
        self.cfg = cfg

    def step(self, message_log_batch, metadata):
        return ([{"role": "environment", "content": repr(self.cfg)} for _ in message_log_batch],
                [None for _ in metadata], None, [0.0 for _ in metadata], [True for _ in metadata], None)


class BrokenInit:
    def __init__(self, cfg):
        raise RuntimeError("no board today")


def not_a_class():
    return 1

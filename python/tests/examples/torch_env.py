"""An environment returning torch tensors, as NeMo RL's do (rewards float32, terminateds bool)."""

import torch

from .interfaces import EnvironmentReturn


class TensorGame:
    """Rewards and terminateds as tensors."""

    def __init__(self, cfg):
        self.cfg = cfg

    def step(self, message_log_batch, metadata):
        n = len(message_log_batch)
        rewards = torch.tensor([0.5 * i for i in range(n)], dtype=torch.float32)
        terminateds = torch.tensor([i % 2 == 1 for i in range(n)], dtype=torch.bool)
        next_metadata = [{"scores": torch.tensor([1, 2, 3]), "best": torch.tensor(2.5), "pair": (1, "a")}
                         for _ in range(n)]
        return EnvironmentReturn([{"role": "environment", "content": "t"} for _ in range(n)], next_metadata,
                                 None, rewards, terminateds, None)


class FloatTerminateds(TensorGame):
    def step(self, message_log_batch, metadata):
        result = super().step(message_log_batch, metadata)
        return result._replace(terminateds=result.terminateds.float(),
                               rewards={"format": torch.ones(len(metadata)), "correct": [0, 1][:len(metadata)]})


class MatrixRewards(TensorGame):
    def step(self, message_log_batch, metadata):
        return super().step(message_log_batch, metadata)._replace(rewards=torch.zeros(len(metadata), 2))

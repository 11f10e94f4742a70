"""An environment with global_post_process_and_metrics, as NeMo RL's math environment has."""

from .plain_env import EchoGame


class WithMetrics(EchoGame):
    """Echo game with metrics."""

    def global_post_process_and_metrics(self, batch):
        rewards = batch["total_reward"]
        got_tensor = hasattr(rewards, "dtype")
        mean = float(rewards.mean()) if got_tensor else sum(rewards) / len(rewards)
        log = batch["message_log"][0] if "message_log" in batch else []
        token_ids = log[0].get("token_ids") if log else None
        metrics = {
            "mean_reward": mean,
            "got_tensor": 1.0 if got_tensor else 0.0,
            "reward_float32": 1.0 if got_tensor and str(rewards.dtype) == "torch.float32" else 0.0,
            "done_bool": 1.0 if hasattr(batch.get("done"), "dtype") and str(batch["done"].dtype) == "torch.bool"
            else 0.0,
            "tokens_int64": 1.0 if hasattr(token_ids, "dtype") and str(token_ids.dtype) == "torch.int64" else 0.0,
            "names_stay_list": 1.0 if isinstance(batch.get("names"), list) else 0.0,
            "count": len(rewards),
            "flag": True,
            "batch_type_is_dict": 1.0 if isinstance(batch, dict) else 0.0,
        }
        if got_tensor:
            metrics["max_reward"] = rewards.max()
        return batch, metrics


class BadMetrics(EchoGame):
    def global_post_process_and_metrics(self, batch):
        return batch, {"ok": 1.0, "text": "abc"}

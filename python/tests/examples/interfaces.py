"""NeMo RL's EnvironmentReturn when nemo_rl is installed, else a local NamedTuple with the same six fields."""

from typing import Any, Dict, List, NamedTuple, Optional

try:
    from nemo_rl.environments.interfaces import EnvironmentInterface, EnvironmentReturn
except ImportError:
    class EnvironmentReturn(NamedTuple):
        observations: List[Dict[str, str]]
        metadata: List[Optional[dict]]
        next_stop_strings: Optional[List[Optional[List[str]]]]
        rewards: Any
        terminateds: Any
        answers: Optional[List[Optional[str]]]

    class EnvironmentInterface:
        def step(self, message_log_batch, metadata):
            raise NotImplementedError

"""Example environment classes for the bridge's tests, in the shape of NeMo RL's environments."""

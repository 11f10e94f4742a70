"""Training of the lab's built-in policy, ``builtin:trained`` (docs/training.md): PyTorch and the standard library only."""

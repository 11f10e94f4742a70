"""rollout_lab_bridge: serve a NeMo-RL-style environment class over Rollout Lab's HTTP remote-environment protocol.

    python -m rollout_lab_bridge my_pkg.envs:MyEnv --config config.json --port 8765

then, in the lab: Environment -> Remote environment (HTTP) -> the printed URL -> Connect.
See README.md next to this package and docs/remote-environments.md in Rollout Lab for the protocol.
"""

__version__ = "0.1.0"

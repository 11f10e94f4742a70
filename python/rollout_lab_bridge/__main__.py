"""``python -m rollout_lab_bridge TARGET ...``: see ``rollout_lab_bridge.cli``."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())

"""``python -m harness_lab.cli`` is ``harness-lab``."""

from harness_lab.cli import main

raise SystemExit(main())

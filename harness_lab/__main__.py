"""``python -m harness_lab`` is ``harness-lab``."""

from harness_lab.cli import main

raise SystemExit(main())

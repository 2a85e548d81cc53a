"""The ``harness-lab`` command line (``harness-lab = harness_lab.cli:main``).

:mod:`harness_lab.cli.dispatch` builds the parser and runs a command;
:mod:`harness_lab.cli.common` holds what the commands share (exit codes, help formatting,
output formats); every other module is one command, or a family of them, and imports only
downward: from ``common`` and from the library, never from another command or the
dispatcher. No module outside this package imports it.
"""

from harness_lab.cli.dispatch import main

__all__ = ["main"]

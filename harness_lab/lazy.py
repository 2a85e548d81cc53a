"""A package's public names imported from their modules on first use (PEP 562).

A package whose names pull in heavy modules (the run core, pandas, SQLAlchemy) lists them
with their modules and lets this module import each when it is first asked for, so that
importing the package, or a light part of it, stays cheap.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["on_first_use"]


def on_first_use(package: str, namespace: dict[str, Any], exports: Mapping[str, str]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package`` for its lazy ``exports``.

    ``exports`` maps each public name to the dotted name of the module that defines it;
    ``namespace`` is the package's ``globals()``, where a name is kept once imported.
    """

    def __getattr__(name: str) -> Any:  # noqa: N807 - the module hook's own name
        """Import a public name from its module on first use."""
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:  # noqa: N807 - the module hook's own name
        """The module's attributes, the names imported on first use included."""
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__

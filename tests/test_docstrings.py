"""Every module, public class, public function and public method has a docstring."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import harness_lab


def public_names_without_docstrings() -> list[str]:
    missing: list[str] = []
    for info in pkgutil.walk_packages(harness_lab.__path__, "harness_lab."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        if not module.__doc__:
            missing.append(info.name)
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
                continue
            if inspect.isclass(obj) or inspect.isfunction(obj):
                if not obj.__doc__:
                    missing.append(f"{info.name}.{name}")
            if inspect.isclass(obj):
                missing += [f"{info.name}.{name}.{attr}" for attr, value in vars(obj).items()
                            if not attr.startswith("_") and inspect.isfunction(value)
                            and not value.__doc__]
    return missing


def test_every_public_name_of_the_package_has_a_docstring() -> None:
    assert public_names_without_docstrings() == []

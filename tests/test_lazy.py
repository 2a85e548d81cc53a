"""A package's names imported on first use: the module's own objects, listed, kept once loaded."""

from __future__ import annotations

import subprocess
import sys

import pytest

from harness_lab.lazy import on_first_use


def test_a_name_is_the_object_its_module_defines() -> None:
    namespace: dict[str, object] = {}
    getattr_, _ = on_first_use("pkg", namespace, {"OrderedDict": "collections"})
    import collections

    assert getattr_("OrderedDict") is collections.OrderedDict


def test_a_name_once_imported_is_kept_in_the_package_namespace() -> None:
    namespace: dict[str, object] = {}
    getattr_, _ = on_first_use("pkg", namespace, {"dedent": "textwrap"})
    getattr_("dedent")
    assert "dedent" in namespace


def test_an_unknown_name_is_an_attribute_error_naming_the_package() -> None:
    getattr_, _ = on_first_use("pkg.sub", {}, {"dedent": "textwrap"})
    with pytest.raises(AttributeError, match="module 'pkg.sub' has no attribute 'indent'"):
        getattr_("indent")


def test_dir_lists_the_names_not_yet_imported() -> None:
    _, dir_ = on_first_use("pkg", {"loaded": 1}, {"dedent": "textwrap"})
    assert dir_() == ["dedent", "loaded"]


def test_importing_the_scenarios_package_loads_neither_the_run_core_nor_sqlalchemy() -> None:
    code = ("import sys, harness_lab.scenarios as s; s.load_text; "
            "print(sorted(m for m in ('harness_lab.harness', 'sqlalchemy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"

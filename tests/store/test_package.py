"""The store package: its SQL stores load on first use, under the names it always had."""

from __future__ import annotations

import pytest

import harness_lab.store as store
import harness_lab.store.group as group
import harness_lab.store.sql as sql


def test_the_sql_stores_are_the_store_modules_own_classes() -> None:
    assert store.GroupCommitStore is group.GroupCommitStore
    assert store.SqlRunStore is sql.SqlRunStore


def test_a_name_the_store_package_does_not_have_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'SqlStore'"):
        _ = store.SqlStore  # type: ignore[attr-defined]

"""Print the transition table of every lifecycle state machine (``python -m harness_lab.demo``)."""

from __future__ import annotations

import pandas as pd

from harness_lab.states import (
    COLLECTION_TRANSITIONS,
    INVOCATION_TRANSITIONS,
    RUN_TRANSITIONS,
    SSE_TRANSITIONS,
    STORED_STATUS_TRANSITIONS,
)

TABLES = {
    "RunState": RUN_TRANSITIONS,
    "InvocationStatus": INVOCATION_TRANSITIONS,
    "CollectionState": COLLECTION_TRANSITIONS,
    "SseState": SSE_TRANSITIONS,
    "diagnosis_run.status": STORED_STATUS_TRANSITIONS,
}


def transitions_frame() -> pd.DataFrame:
    """One row per legal transition of every axis's state machine."""
    rows = [
        {"axis": axis, "from": src.value, "to": dst.value}
        for axis, table in TABLES.items()
        for src, targets in table.items()
        for dst in sorted(targets)
    ]
    return pd.DataFrame(rows, columns=["axis", "from", "to"])


def main() -> None:
    """Print the table."""
    print(transitions_frame().to_string(index=False))


if __name__ == "__main__":
    main()

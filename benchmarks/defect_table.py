"""Print the table of docs/defects.md: which detector catches which seeded defect.

    python benchmarks/defect_table.py [--only library,invariants] [DEFECT ...]

Every defect is seeded into every scenario of the library (``scenarios/``), then the
library, the invariants, the fault explorer, the property search and ``conform --serve``
are asked whether they notice (:mod:`harness_lab.explore.seeded`). The explorer explores
the whole library once per defect and once without (minutes on two cores); conform starts
live servers. Prints the Markdown table and how long each row took.
"""

from __future__ import annotations

import argparse
import sys
import time

from harness_lab.defects import Defect
from harness_lab.explore.seeded import (
    DETECTORS,
    explorer_findings,
    load_library,
    markdown_table,
    measure,
)


def main(argv: list[str] | None = None) -> int:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("defects", nargs="*", type=Defect, default=list(Defect),
                        metavar="DEFECT", help="the defects to measure (default: every one)")
    parser.add_argument("--only", default=",".join(DETECTORS),
                        help="the detectors to measure, comma-separated")
    args = parser.parse_args(argv)
    detectors = [d for d in args.only.split(",") if d]
    unknown = sorted(set(detectors) - set(DETECTORS))
    if unknown:
        parser.error(f"--only: unknown detector {', '.join(unknown)} "
                     f"(choose from {', '.join(DETECTORS)})")
    library = load_library()
    start = time.perf_counter()
    unseeded: set[str] = set()
    if "explorer" in detectors:
        unseeded = explorer_findings(library, None)
        print(f"without a defect the explorer flags {len(unseeded)} variants "
              f"({time.perf_counter() - start:.1f} s)", file=sys.stderr)
    rows = []
    for defect in args.defects:
        began = time.perf_counter()
        rows.append(measure(defect, library, detectors=detectors, unseeded=unseeded))
        print(f"{defect.value}: {rows[-1].cells} ({time.perf_counter() - began:.1f} s)",
              file=sys.stderr)
    print(markdown_table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

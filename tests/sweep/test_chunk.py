"""The job a sweep worker runs: it loads the harness, not the reporting stack."""

from __future__ import annotations

import subprocess
import sys


def test_a_worker_importing_the_chunk_job_loads_no_pandas_matplotlib_or_sqlalchemy() -> None:
    probe = ("import sys, harness_lab.sweep.chunk; "
             "print(sorted(m for m in ('pandas', 'matplotlib', 'sqlalchemy') "
             "if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"


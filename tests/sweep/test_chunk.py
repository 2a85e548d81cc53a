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



def test_a_chunk_keeps_its_outcomes_as_columns_and_gives_them_back_unchanged() -> None:
    from harness_lab.sweep.chunk import ChunkResult
    from harness_lab.sweep.sample import Outcome

    outcomes = [
        Outcome(0, 4, "DIAGNOSIS", "SUCCESS", "SUCCESS", None, "SUCCESS", 9.5, 5, 6, 120),
        Outcome(0, 5, None, None, None, None, None, 0.0, 0, 0, 0, (), "crash: host died"),
        Outcome(0, 6, "DIAGNOSIS", "SUCCESS", "FALLBACK", "INSUFFICIENT_EVIDENCE", "SUCCESS",
                3.0, 1, 2, 40, ("cited_ready_only", "sse_protocol")),
    ]
    chunk = ChunkResult.of(0, 4, outcomes)
    assert chunk.columns["sample"] == [4, 5, 6]
    assert chunk.columns["violations"] == ["", "", "cited_ready_only,sse_protocol"]
    assert len(chunk) == 3
    assert chunk.outcomes == tuple(outcomes)

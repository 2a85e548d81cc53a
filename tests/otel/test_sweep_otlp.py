"""``harness-lab sweep --otlp URL``: the runs the sweep keeps whole (``--keep-every``) reach a
real receiver, one trace each, and no other; without ``--keep-every`` the flag is refused
before any sample runs; without the flag nothing of OpenTelemetry is imported."""

from __future__ import annotations

import pytest

from tests.cli.conftest import ROOT, run_cli
from tests.otel.conftest import Receiver, modules_loaded_by, string_attributes

pytestmark = pytest.mark.slow  # each test runs a sweep in a process of its own

DEADLINE_SWEEP = str(ROOT / "scenarios" / "sweeps" / "deadline-sweep.yaml")  # 4 grid points


def test_sweep_sends_the_runs_it_keeps_and_no_other(receiver: Receiver) -> None:
    done = run_cli("sweep", DEADLINE_SWEEP, "--samples", "5", "--keep-every", "2", "-q",
                   "--no-log", "--otlp", receiver.url)
    assert done.returncode == 0, done.stderr
    spans = [span for _, span in receiver.spans()]
    roots = [s for s in spans if not s.parent_span_id]
    # samples 0, 2 and 4 of each of the four grid points; 20 runs were made
    assert sorted(string_attributes(r)["harness_lab.run_id"] for r in roots) == [
        f"run-g{g}-s000000{s}" for g in range(4) for s in (0, 2, 4)]
    assert {string_attributes(r)["harness_lab.scenario"] for r in roots} == {"deadline-sweep"}
    assert len({s.trace_id for s in spans}) == 12
    assert (f"otlp: {len(spans)} span(s) of 12 run(s) sent to {receiver.url}/v1/traces"
            in done.stderr)


def test_sweep_otlp_without_kept_runs_is_refused_before_any_sample(
        receiver: Receiver) -> None:
    done = run_cli("sweep", DEADLINE_SWEEP, "--samples", "5", "--no-log", "--otlp",
                   receiver.url)
    assert done.returncode == 2
    assert done.stderr == ("harness-lab sweep: --otlp sends the runs the sweep keeps whole: "
                           "give --keep-every K too (every K-th sample of each grid point)\n")
    assert receiver.requests == []
    compared = run_cli("sweep", DEADLINE_SWEEP, "--samples", "5", "--keep-every", "1",
                       "--no-log", "--compare", "config.deadline_s=4", "--against",
                       "config.deadline_s=8", "--otlp", receiver.url)
    assert compared.returncode == 2
    assert compared.stderr == ("harness-lab sweep: --otlp sends the runs a sweep keeps; "
                               "--compare and --load keep none\n")


def test_sweep_says_so_and_exits_one_when_the_receiver_refuses_the_spans(
        receiver: Receiver) -> None:
    receiver.status = 400
    done = run_cli("sweep", DEADLINE_SWEEP, "--samples", "1", "--keep-every", "1", "-q",
                   "--no-log", "--otlp", receiver.url)
    assert done.returncode == 1
    said = done.stderr.splitlines()[-1]
    assert said.startswith("harness-lab sweep: --otlp: could not send ")
    assert said.endswith(f" span(s) to {receiver.url}/v1/traces (0 sent before them)")
    assert "release_outcome" in done.stdout  # the table was printed all the same


def test_sweep_without_otlp_imports_nothing_of_opentelemetry() -> None:
    done = modules_loaded_by("sweep", DEADLINE_SWEEP, "--samples", "2", "--keep-every", "1",
                             "-q", "--no-log")
    assert done.returncode == 0, done.stderr
    assert "loaded: []" in done.stderr

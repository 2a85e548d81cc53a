"""harness-lab conform: the scenario files against a live harness-lab serve, on SQLite and
on PostgreSQL, with the parity figure; what cannot be played live is said, with reasons."""

from __future__ import annotations

import json
import socket
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from harness_lab.cli import main
from harness_lab.live import conform
from harness_lab.live.conform import held_for_the_disconnect, not_applicable
from harness_lab.live.conform_suite import ServeProcess
from harness_lab.scenarios.loader import load_file
from harness_lab.scripted import load_script

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
HANDFUL = ["paths/diagnosis.yaml", "faults/client-disconnect-at.yaml",
           "faults/provider-error-model.yaml", "faults/user-cancel-at-s.yaml",
           "faults/crash-after-tool.yaml"]


def passed_report(capsys: pytest.CaptureFixture[str], *paths: str,
                  db: str | None = None) -> dict[str, Any]:
    """``conform --serve`` of ``paths`` (under scenarios/) as its JSON report, which must
    have exited 0."""
    code = main(["conform", "--serve", "--format", "json",
                 *(["--db", db] if db is not None else []),
                 *(str(SCENARIOS / path) for path in paths)])
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert code == 0, [(r["scenario"], r["verdict"], r["reasons"]) for r in report["results"]
                       if r["verdict"] not in ("pass", "n/a")]
    return report


@pytest.mark.live
@pytest.mark.slow
def test_conform_serve_passes_a_handful_and_prints_the_parity(
        capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["conform", "--serve", *(str(SCENARIOS / p) for p in HANDFUL)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "4 pass, 0 fail, 0 error, 1 not applicable live" in out
    assert "parity with the simulation 100.0% (4/4 outcomes agree)" in out
    assert "the host process dying mid-run is simulated" in out


@pytest.mark.live
@pytest.mark.slow
def test_conform_serve_on_postgresql_stores_and_checks_the_run(
        postgres_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    report = passed_report(capsys, "faults/client-disconnect-at.yaml", db=postgres_url)
    result = report["results"][0]
    assert (result["verdict"], result["agrees"]) == ("pass", True)
    assert result["live"]["db_status"] == "CANCELLED"


@pytest.mark.live
@pytest.mark.slow
def test_a_client_leaving_after_the_winning_cancel_is_one_rejected_termination_live(
        capsys: pytest.CaptureFixture[str]) -> None:
    """The server cancels at once when the client leaves, then tells the SSE session: one
    request, traced once as the loser (doc §4), as simulated."""
    report = passed_report(capsys, "late/first-reason-wins.yaml[user-cancel-first]",
                           "late/rejected-termination-after-winner.yaml")
    assert [(r["scenario"], r["verdict"]) for r in report["results"]] == [
        ("late-first-reason-wins[user-cancel-first]", "pass"),
        ("late-rejected-termination-after-winner", "pass")]


@pytest.mark.live
@pytest.mark.slow
def test_a_cancel_tied_with_the_deadline_is_not_applicable_live_and_the_others_pass(
        capsys: pytest.CaptureFixture[str]) -> None:
    report = passed_report(capsys, "policy/deadline-at-call-end.yaml")
    verdicts = {r["scenario"]: r["verdict"] for r in report["results"]}
    assert verdicts == {"policy-deadline-at-call-end[boundary]": "pass",
                        "policy-deadline-at-call-end[instant]": "pass",
                        "policy-deadline-at-call-end[boundary-cancel]": "n/a",
                        "policy-deadline-at-call-end[instant-cancel]": "n/a"}
    tied = next(r for r in report["results"] if r["scenario"].endswith("[boundary-cancel]"))
    assert tied["reasons"] == ["user_cancel(after tool#1): comes at the instant the 5 s "
                               "deadline is reached; which wins is decided within one virtual "
                               "instant, a tie no wall clock plays"]


@pytest.mark.live
@pytest.mark.slow
def test_the_trace_of_a_run_whose_client_left_between_events_is_left_unchecked(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Live, the server learns at once that the client left (here while the router call is
    in flight), the simulated one only when its next send fails: the same outcome, another
    trace (no budget stop reached to lose)."""
    report = passed_report(capsys, "sse/budget-stop-after-client-left.yaml")
    [result] = report["results"]
    assert (result["verdict"], result["agrees"]) == ("pass", True)
    assert {"trace_contains", "trace_excludes"} <= set(result["unchecked"])


@pytest.mark.live
@pytest.mark.slow
def test_a_client_slow_to_close_still_leaves_before_the_call_in_flight_returns(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """On a loaded machine the client may close well after it read its last event: the call
    then in flight (the router's, 10 ms at the default time scale) is held until the harness
    has seen the closed connection, so the budget stop that follows it still loses."""
    close = conform._Stream.close

    def starved(stream: conform._Stream) -> None:
        time.sleep(0.25)
        close(stream)

    monkeypatch.setattr(conform._Stream, "close", starved)
    report = passed_report(capsys, "sse/budget-stop-after-client-left.yaml")
    [result] = report["results"]
    assert (result["live"]["run_state"], result["live"]["db_status"]) == ("CANCELLED",
                                                                          "CANCELLED")


def test_the_call_held_for_a_client_that_leaves_is_the_first_to_end_after_its_last_event(
        ) -> None:
    [loaded] = load_file(SCENARIOS / "sse/budget-stop-after-client-left.yaml")
    held = held_for_the_disconnect(loaded)
    assert held is not None and held.label() == "after router#1"


def test_no_call_is_held_for_a_client_that_leaves_at_a_lifecycle_point() -> None:
    [loaded] = load_file(SCENARIOS / "faults/client-disconnect-at.yaml")
    assert held_for_the_disconnect(loaded) is None


def test_a_cancel_before_the_run_has_started_is_not_applicable_live() -> None:
    sc = load_script(str(SCENARIOS / "late/cancel-before-start.yaml"), None, "user-cancel")
    [why] = not_applicable(sc, configurable=True)
    assert why == ("user_cancel(at_s=0.0): a cancel before the run has started; a client can "
                   "name the run only once its metadata event has come, when the run has "
                   "begun")


def test_a_crash_and_a_deadline_at_a_lifecycle_point_are_not_applicable_live() -> None:
    crash = load_script(str(SCENARIOS / "faults/crash-after-tool.yaml"), None, None)
    deadline = load_script(str(SCENARIOS / "faults/deadline-at-after.yaml"), None, None)
    assert any("host process dying" in r for r in not_applicable(crash, configurable=True))
    assert any("virtual time only" in r for r in not_applicable(deadline, configurable=True))


def test_a_store_failure_is_not_applicable_live_even_to_a_harness_conform_serves() -> None:
    sc = load_script(str(SCENARIOS / "faults/store-refuses-running-row.yaml"), None, None)
    [why] = not_applicable(sc, configurable=True)
    assert why.startswith("store_failure(operation=insert_running, message=disk full): ")
    assert "a live harness's database is not the scenario's to break" in why


def test_a_deadline_in_seconds_applies_only_to_a_harness_conform_configures() -> None:
    sc = load_script(str(SCENARIOS / "faults/deadline-at-s-provider-outlives.yaml"), None,
                     None)
    assert not_applicable(sc, configurable=True) == []
    assert any("configuration of the harness" in r
               for r in not_applicable(sc, configurable=False))


def test_the_server_conform_starts_keeps_a_configuration_value_that_is_null(
        tmp_path: Path) -> None:
    from harness_lab.scenarios import load_file

    [loaded] = [s for s in load_file(SCENARIOS / "faults" / "unstorable-token-count.yaml")
                if s.scenario.name.endswith("[at-the-limit]")]
    assert loaded.scenario.config.budget.tokens is None  # no token limit
    ServeProcess(loaded.scenario, "http://127.0.0.1:1", "sqlite:///runs.db", time_scale=0.05,
                 workdir=tmp_path)
    [served] = load_file(tmp_path / "scenario.yaml")
    assert served.scenario.config == loaded.scenario.config


def test_conform_without_a_url_or_serve_is_a_usage_error(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conform", str(SCENARIOS / HANDFUL[0])]) == 2
    assert "give the harness's URL, or --serve" in capsys.readouterr().err


def test_conform_serve_without_the_live_extra_names_it_once_before_any_serve_starts(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # as if it were not installed
    assert main(["conform", "--serve", *(str(SCENARIOS / p) for p in HANDFUL)]) == 2
    out, err = capsys.readouterr()
    assert err == ("harness-lab conform: this needs the optional package 'uvicorn'; "
                   "install it with: pip install 'harness_lab[live]'\n")
    assert out == ""


@pytest.mark.parametrize("url", ["http://127.0.0.1:80x", "http://[::1", "http://"])
def test_conform_to_a_url_no_request_could_go_to_is_a_usage_error_before_anything_runs(
        capsys: pytest.CaptureFixture[str], url: str) -> None:
    assert main(["conform", url, str(SCENARIOS / HANDFUL[0])]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"harness-lab conform: {url}: not a URL a request can go to"), err


@pytest.mark.live
@pytest.mark.slow
def test_conform_drives_a_harness_at_a_url_that_calls_the_providers_port(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    sc = load_script(str(SCENARIOS / "paths/diagnosis.yaml"), None, None)
    serve = ServeProcess(sc, f"http://127.0.0.1:{port}", db, time_scale=0.05,
                         workdir=tmp_path)
    adapter = tmp_path / "adapter.yaml"
    adapter.write_text(f"run_path: null\ntrace_path: null\ndatabase: {{url: '{db}'}}\n")
    url = serve.start()
    try:
        code = main(["conform", url, str(SCENARIOS / "paths/diagnosis.yaml"),
                     "--providers-port", str(port), "--adapter", str(adapter)])
    finally:
        serve.stop()
    out = capsys.readouterr().out
    assert code == 0, out
    assert "1 pass, 0 fail" in out


@pytest.mark.live
@pytest.mark.slow
def test_an_expectation_naming_the_scenarios_own_ids_holds_against_a_live_run(
        capsys: pytest.CaptureFixture[str]) -> None:
    # the file expects metadata and content to carry session-000001 / run-000001, the ids the
    # simulator gives; a live server draws its own, which the check reads as the simulated ones
    report = passed_report(capsys, "sse/terminal-content-done.yaml")
    assert report["results"][0]["verdict"] == "pass"


@pytest.mark.live
@pytest.mark.slow
def test_scenarios_with_one_configuration_share_a_serve_and_are_reported_as_asked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (SCENARIOS / "outcomes" / "conclusion-guards-pass.yaml").read_text(encoding="utf-8")

    def named(name: str) -> str:
        return text.replace("name: conclusion-guards-pass", f"name: {name}")

    (tmp_path / "a.yaml").write_text(named("a"), encoding="utf-8")
    (tmp_path / "b.yaml").write_text(named("b") + "config: {deadline_s: 50}\n",
                                     encoding="utf-8")  # another configuration
    (tmp_path / "c.yaml").write_text(named("c"), encoding="utf-8")  # a's twin, played after a
    code = main(["conform", "--serve", "--format", "json", str(tmp_path)])
    report = json.loads(capsys.readouterr().out)
    assert code == 0, report
    assert [(r["scenario"], r["verdict"]) for r in report["results"]] == [
        ("a", "pass"), ("b", "pass"), ("c", "pass")]
    assert report["serves"] == 2
    assert main(["conform", "--serve", str(tmp_path)]) == 0
    table = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in table[1:4]] == ["a", "b", "c"]
    assert table[-1].endswith("on 2 serve(s)")

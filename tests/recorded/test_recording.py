"""record_scenario and the pytest plugin's ``--record-mode``: only a sound recording replaces
a cassette."""

from __future__ import annotations

import gc
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from harness_lab.cli.record import reference_server
from harness_lab.recorded.recording import record_scenario, recorded_result
from harness_lab.scenarios import load_file
from harness_lab.scenarios.loader import LoadedScenario

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "cassettes" / "reference" / "diagnosis-success.yaml"
SCENARIO = ROOT / "scenarios" / "recorded" / "diagnosis-success.yaml"


def scenario_text(root_url: str, cassette: str) -> str:
    """The shipped recorded scenario, pointed at ``root_url`` and ``cassette``."""
    text = SCENARIO.read_text(encoding="utf-8")
    text = text.replace("http://127.0.0.1:8765", root_url)
    return text.replace("../../cassettes/recorded-diagnosis-success.yaml", cassette)


@contextmanager
def served_scenario(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                    ) -> Iterator[LoadedScenario]:
    """The shipped recorded scenario as ``tmp_path/s.yaml``, pointed at a running reference
    server (its key in the environment) and at the cassette ``tmp_path/c.yaml``."""
    with reference_server(REFERENCE) as server:
        monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
        path = tmp_path / "s.yaml"
        path.write_text(scenario_text(server.root_url, "c.yaml"), encoding="utf-8")
        [loaded] = load_file(path)
        yield loaded


def test_record_scenario_records_then_replays_and_rewrite_records_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with served_scenario(tmp_path, monkeypatch) as loaded:
        first = record_scenario(loaded)
        again = record_scenario(loaded)
        replay = record_scenario(loaded, record_mode="none")
    assert (first.ok, first.written, first.recorded, first.interactions) == (True, True, 7, 7)
    assert (again.ok, again.written, again.played, again.recorded) == (True, False, 7, 0)
    assert (replay.ok, replay.written, replay.played) == (True, False, 7)
    assert first.path == tmp_path / "c.yaml" and first.size == (tmp_path / "c.yaml").stat(
        ).st_size
    with served_scenario(tmp_path, monkeypatch) as loaded:
        rewritten = record_scenario(loaded, record_mode="rewrite")
    assert (rewritten.ok, rewritten.written, rewritten.recorded) == (True, True, 7)
    assert rewritten.record_mode == "all"


def test_a_recording_closes_its_connections_when_it_ends(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with served_scenario(tmp_path, monkeypatch) as loaded:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ResourceWarning)
            outcome = record_scenario(loaded)
            gc.collect()
    assert outcome.recorded == 7
    assert [str(w.message) for w in caught if w.category is ResourceWarning] == []


def test_record_scenario_refuses_unknown_modes_and_scenarios_that_are_not_recorded(
        tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(scenario_text("http://127.0.0.1:9", "c.yaml"), encoding="utf-8")
    [loaded] = load_file(path)
    with pytest.raises(ValueError, match="record mode must be one of none, once, "
                                         "new_episodes, all, rewrite, not 'sometimes'"):
        record_scenario(loaded, record_mode="sometimes")
    plain = loaded.scenario.model_copy(update={"recorded": None, "cassette": None})
    with pytest.raises(ValueError, match="needs `recorded:` and `cassette:`"):
        record_scenario(type(loaded)(plain, str(path)))


@pytest.mark.slow
def test_the_plugin_records_with_record_mode_and_a_refused_recording_fails_the_item(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    scenarios = pytester.mkdir("scenarios")
    cassette = pytester.path / "cassettes" / "rec.yaml"
    with reference_server(REFERENCE) as server:
        monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
        (scenarios / "rec.yaml").write_text(
            scenario_text(server.root_url, "../cassettes/rec.yaml"), encoding="utf-8")
        run = pytester.runpytest_subprocess  # a fresh interpreter per session, as a user runs it
        run("scenarios", "--record-mode", "once").assert_outcomes(passed=1)
        recorded = cassette.read_bytes()
        monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-key-000000000000")
        refused = run("scenarios", "--record-mode", "rewrite")
    refused.assert_outcomes(failed=1)
    refused.stdout.fnmatch_lines(["*not recorded (*rec.yaml left as it was)*HTTP 401*"])
    assert cassette.read_bytes() == recorded
    run("scenarios").assert_outcomes(passed=1)  # the default, none: replayed offline


def test_a_fork_with_faults_replays_under_any_record_mode_and_leaves_the_cassette(
        tmp_path: Path) -> None:
    cassette = tmp_path / "c.yaml"
    cassette.write_bytes((ROOT / "cassettes" / "recorded-diagnosis-success.yaml").read_bytes())
    before = cassette.read_bytes()
    text = (ROOT / "scenarios" / "recorded" / "disconnect-after-second-tool.yaml").read_text(
        encoding="utf-8")
    path = tmp_path / "fork.yaml"
    path.write_text(text.replace("../../cassettes/recorded-diagnosis-success.yaml", "c.yaml"),
                    encoding="utf-8")
    [loaded] = load_file(path)
    result = recorded_result(loaded, "rewrite")
    assert result.verdict == "ok", result.error
    assert result.record is not None and result.record.run_state.value == "CANCELLED"
    assert cassette.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml", "fork.yaml"]

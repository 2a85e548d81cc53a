"""calibrate: a sweep drawn from known distributions is fitted back within sampling error."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from harness_lab.audit.calibrate import QUANTILES, calibrate, fit_distribution, observe
from harness_lab.cli import main
from harness_lab.logs import read_log
from harness_lab.sweep.spec import SweepBlock
from tests.scenarios import TWO_TOOL_MODEL


def comment(text: str) -> str:
    """The comment that heads a printed block, its lines joined: 80 columns at the most, but
    for a path or URL too long for one, which stands alone on its line."""
    lines = [line for line in text.splitlines() if line.startswith("#")]
    assert lines and all(len(line) <= 80 or " " not in line[2:] for line in lines)
    return " ".join(line.removeprefix("# ") for line in lines)

KNOWN = """\
name: known-latencies
description: Runs drawn from known distributions, to fit them back.
tools:
  logs: {}
  metrics: {}
""" + TWO_TOOL_MODEL + """\
config: {deadline_s: 1000}
sweep:
  latency:
    model: {lognormal: {median: 1.0, sigma: 0.5}}
    tool: {lognormal: {median: 2.0, sigma: 0.3}}
    guard: {fixed: 0.5}
  faults:
    tool_error_p: 0.1
    provider_error_p: {guard: 0.1}
    disconnect: {p: 0.2, at_s: {uniform: [0, 1]}}
"""
SAMPLES = 600


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The log of a sweep of KNOWN, every sample's record kept."""
    where = tmp_path_factory.mktemp("known")
    (where / "known.yaml").write_text(KNOWN, encoding="utf-8")
    assert main(["sweep", str(where / "known.yaml"), "--samples", str(SAMPLES), "--seed", "11",
                 "--workers", "1", "--keep-every", "1", "--log-dir", str(where / "logs"),
                 "--quiet"]) == 0
    (path,) = (where / "logs").glob("*.jsonl")
    return path


def _within(fitted: float, true: float, standard_error: float) -> bool:
    return abs(fitted - true) <= 4 * standard_error


def test_the_fitted_sweep_block_falls_within_the_sampling_error_of_the_true_one(
        swept: Path) -> None:
    records = read_log(swept).records
    obs = observe(records)
    block = calibrate(records)
    model, tool = block["latency"]["model"]["lognormal"], block["latency"]["tool"]["lognormal"]
    n_model, n_tool = len(obs.latency["model"]), len(obs.latency["tool"])
    assert n_model > 600 and n_tool > 300
    # the log-space mean has standard error sigma/sqrt(n), the log-space sigma sigma/sqrt(2n)
    assert _within(math.log(model["median"]), 0.0, 0.5 / math.sqrt(n_model))
    assert _within(model["sigma"], 0.5, 0.5 / math.sqrt(2 * n_model))
    assert _within(math.log(tool["median"]), math.log(2.0), 0.3 / math.sqrt(n_tool))
    assert _within(tool["sigma"], 0.3, 0.3 / math.sqrt(2 * n_tool))
    assert block["latency"]["guard"] == {"fixed": 0.5}
    faults = block["faults"]
    assert _within(faults["tool_error_p"], 0.1, math.sqrt(0.1 * 0.9 / obs.tool_calls))
    guards = obs.calls["guard"]
    assert _within(faults["provider_error_p"]["guard"], 0.1, math.sqrt(0.1 * 0.9 / guards))
    assert _within(faults["disconnect"]["p"], 0.2, math.sqrt(0.2 * 0.8 / SAMPLES))
    at = faults["disconnect"]["at_s"]["empirical"]
    assert len(at) == QUANTILES and 0 <= at[0] and at[-1] <= 1
    assert _within(at[QUANTILES // 2], 0.5, 0.5 / math.sqrt(len(obs.disconnects)))  # a median
    SweepBlock.model_validate(block)


def test_the_command_prints_a_sweep_block_a_scenario_file_takes(
        swept: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["calibrate", str(swept), "--fit", "empirical"]) == 0
    text = capsys.readouterr().out
    assert comment(text).startswith(f"fitted by harness-lab calibrate from {swept} (empirical)")
    block = yaml.safe_load(text)["sweep"]
    assert len(block["latency"]["model"]["empirical"]) == QUANTILES
    SweepBlock.model_validate(block)
    assert main(["calibrate", str(swept), "--out", str(tmp_path / "no" / "x.yaml")]) == 2
    assert "the directory" in capsys.readouterr().err
    assert main(["calibrate", str(swept), "--out", str(tmp_path)]) == 2  # a directory
    assert f"--out {tmp_path} is a directory; give a file name" in capsys.readouterr().err
    assert main(["calibrate", str(tmp_path / "missing.jsonl")]) == 2


def test_fits_of_simple_samples() -> None:
    assert fit_distribution([0.5, 0.5, 0.5]) == {"fixed": 0.5}
    fitted = fit_distribution([math.exp(-1), 1.0, math.exp(1)])["lognormal"]
    assert fitted["median"] == 1.0
    assert fitted["sigma"] == pytest.approx(math.sqrt(2 / 3), rel=1e-3)
    assert fit_distribution([float(i) for i in range(101)], "empirical")["empirical"] == [
        float(i) for i in range(0, 101, 5)]
    with pytest.raises(ValueError, match="no values"):
        fit_distribution([])


def test_latencies_holding_a_zero_are_kept_as_quantiles_not_forced_into_a_lognormal() -> None:
    fitted = fit_distribution([0.0, 0.2, 0.2, 0.2])  # quantile i is value round(3 i / 20)
    assert fitted == {"empirical": [0.0] * 4 + [0.2] * 17}


def test_the_command_says_which_kinds_it_kept_as_quantiles_and_why(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    starter = tmp_path / "scenarios"  # one of its scenarios gives no latencies: calls of 0 s
    assert main(["init", str(starter)]) == 0
    assert main(["run", str(starter), "-q", "--log-dir", str(tmp_path / "logs")]) == 0
    (log,) = (tmp_path / "logs").glob("*.jsonl")
    capsys.readouterr()
    assert main(["calibrate", str(log)]) == 0
    text = capsys.readouterr().out
    note = comment(text)
    assert note.endswith(
        ": quantiles, not a lognormal: some of these calls took no time, which no lognormal "
        "has")
    block = yaml.safe_load(text)["sweep"]["latency"]
    quantiled = note.partition("; paste under a scenario's top level ")[2].partition(
        ":")[0].split(", ")
    assert quantiled and all("empirical" in block[kind] for kind in quantiled)
    assert all(fit.get("lognormal", {}).get("sigma", 0) < 3 for fit in block.values())


def test_runs_whose_times_contradict_are_left_out_of_the_fit_and_named(swept: Path) -> None:
    records = read_log(swept).records
    first, second = records[0], records[1]
    assert first.stored_row is not None and second.stored_row is not None
    backwards = replace(first, stored_row={**first.stored_row,
                                           "finished_at": first.stored_row["created_at"] - 1})
    thrown = replace(second, trace=tuple(replace(e, t=-1e12) if e.seq == 1 else e
                                         for e in second.trace))
    obs = observe([backwards, thrown, *records[2:]])
    assert [run_id for run_id, _ in obs.contradicting] == [first.run_id, second.run_id]
    assert obs.contradicting[0][1].startswith("the stored finished_at ")
    assert obs.runs == len(records) - 2
    assert calibrate([backwards, thrown, *records[2:]]) == calibrate(records[2:])


def test_the_command_names_the_runs_it_left_out_for_their_times(
        swept: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.conftest import finished_before_created, tampered_log

    entry = next(e for e in read_log(swept).entries if e.record is not None)
    log = tampered_log(swept, entry.scenario, finished_before_created, tmp_path / "t.jsonl")
    capsys.readouterr()
    assert main(["calibrate", str(log), "-q"]) == 0
    out, err = capsys.readouterr()
    assert err.startswith(f"harness-lab calibrate: left out {entry.record.run_id}: "
                          "times_consistent: the stored finished_at ")
    assert "; left out: 1 whose times contradict;" in comment(out)
    SweepBlock.model_validate(yaml.safe_load(out)["sweep"])

"""``harness-lab record``: a summary on success; a refused recording leaves the cassette as it
was and exits 1; usage errors are one line and exit 2."""

from __future__ import annotations

import os
import re
import shutil
import socket
from pathlib import Path

import pytest

from harness_lab.cli import main
from harness_lab.cli.record import reference_server
from harness_lab.runner import run_paths
from tests.recorded.conftest import _no_proxies  # noqa: F401 - applies here too
from tests.scenarios import missing_context

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "cassettes" / "reference" / "diagnosis-success.yaml"
SHIPPED = ROOT / "cassettes" / "recorded-diagnosis-success.yaml"


@pytest.fixture
def library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the shipped recorded scenario whose cassette lives in ``tmp/cassettes``."""
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "cassettes").mkdir()
    text = (ROOT / "scenarios" / "recorded" / "diagnosis-success.yaml").read_text(
        encoding="utf-8")
    scenario = tmp_path / "scenarios" / "diagnosis-success.yaml"
    scenario.write_text(text.replace("../../cassettes/", "../cassettes/"), encoding="utf-8")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def cassette_of(library: Path) -> Path:
    """Where the library's scenario keeps its cassette."""
    return library / "cassettes" / "recorded-diagnosis-success.yaml"


def with_shipped_cassette(library: Path) -> bytes:
    """Put the shipped cassette in place; its bytes."""
    shutil.copy(SHIPPED, cassette_of(library))
    return cassette_of(library).read_bytes()


def dead_port() -> int:
    """A local port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_recording_writes_the_cassette_and_prints_a_short_summary(
        library: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["record", "scenarios/diagnosis-success.yaml", "--reference", str(REFERENCE)])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    assert re.fullmatch(r"recorded 7 interactions into "
                        r"cassettes/recorded-diagnosis-success\.yaml \(7 in all, "
                        r"2\d\.\d KiB\)\nscenario recorded-diagnosis-success: ok\n", out), out
    assert "{" not in out
    text = cassette_of(library).read_text(encoding="utf-8")
    assert "sk-reference-not-a-secret" not in text
    assert [r.verdict for r in run_paths([library / "scenarios"])] == ["ok"]
    assert sorted(p.name for p in (library / "cassettes").iterdir()) == [
        "recorded-diagnosis-success.yaml"]


def test_the_default_mode_once_replays_an_existing_cassette_and_leaves_it_alone(
        library: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = with_shipped_cassette(library)
    code = main(["record", "scenarios/diagnosis-success.yaml", "--reference", str(REFERENCE)])
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith("nothing new to record: cassettes/recorded-diagnosis-success.yaml "
                          "holds 7 interactions (")
    assert "\n7 replayed (record mode once; --mode all records it again)\n" in out
    assert all(len(line) <= 100 for line in out.splitlines())
    assert cassette_of(library).read_bytes() == before


def test_a_wrong_key_answered_401_leaves_the_old_cassette_byte_identical(
        library: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    before = with_shipped_cassette(library)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-key-000000000000")
    with reference_server(REFERENCE) as server:
        url = server.base_url
        code = main(["record", "scenarios/diagnosis-success.yaml", "--base-url", url,
                     "--mode", "all"])
    assert server.used == 0 and [r.status for r in server.requests] == [401]
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    assert err.splitlines()[0] == (
        "not recorded: cassettes/recorded-diagnosis-success.yaml was left as it was")
    assert err.splitlines()[-1] == "  (scenario recorded-diagnosis-success, record mode all)"
    assert err.splitlines()[1:3] == [
        f"  request 1 (POST {url}/chat/completions) was answered HTTP 401",
        "  the endpoint refused the key: is $OPENAI_API_KEY set and right?"]
    assert cassette_of(library).read_bytes() == before
    assert sorted(p.name for p in (library / "cassettes").iterdir()) == [
        "recorded-diagnosis-success.yaml"]


def test_the_reference_server_gets_its_own_key_whatever_the_environment_holds(
        library: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-users-real-key-0000000000")
    code = main(["record", "scenarios/diagnosis-success.yaml", "--reference", str(REFERENCE)])
    assert code == 0, capsys.readouterr().err
    assert os.environ["OPENAI_API_KEY"] == "sk-users-real-key-0000000000"
    assert cassette_of(library).exists()


def test_a_dead_endpoint_is_a_clear_failure_and_the_old_cassette_stays(
        library: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = with_shipped_cassette(library)
    url = f"http://127.0.0.1:{dead_port()}/v1"
    code = main(["record", "scenarios/diagnosis-success.yaml", "--base-url", url,
                 "--mode", "all"])
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    assert f"request 1 (POST {url}/chat/completions) got no answer: ConnectError" in err
    assert "recorded 1" not in err
    assert cassette_of(library).read_bytes() == before


def test_a_refused_first_recording_writes_no_file(
        library: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"http://127.0.0.1:{dead_port()}/v1"
    assert main(["record", "scenarios/diagnosis-success.yaml", "--base-url", url]) == 1
    assert "cassettes/recorded-diagnosis-success.yaml was not written" in capsys.readouterr().err
    assert list((library / "cassettes").iterdir()) == []


@pytest.mark.parametrize(("reference", "content", "message"), [
    ("nosuch.yaml", None, "--reference nosuch.yaml: cannot read file: No such file or "
     "directory"),
    ("empty.yaml", "", "--reference empty.yaml: needs a `completions` list"),
    ("broken.yaml", "completions: [\n", "--reference broken.yaml:2: malformed YAML: did not "
     "find expected node content"),
    ("item.yaml", "completions: [5]\n", "--reference item.yaml: completions[0]: must be a "
                                          "mapping"),
    ("usage.yaml", "completions: [{text: hi, usage: [1]}]\n",
     "--reference usage.yaml: completions[0].usage: must be"),
    ("bomb.yaml", "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
     + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]\n"
               for i in range(9)) + "completions: [{json: {k: *j}}]\n",
     "--reference bomb.yaml:5: this value holds more than 100,000 values once its "
     "aliases and merges are expanded"),
    ("deep.yaml", "completions: " + "[" * 100 + "]" * 100 + "\n",
     "--reference deep.yaml:1: nested more than 40 levels deep"),
])
def test_a_bad_reference_file_is_one_line_and_exit_2(
        library: Path, capsys: pytest.CaptureFixture[str], reference: str,
        content: str | None, message: str) -> None:
    if content is not None:
        (library / reference).write_text(content, encoding="utf-8")
    code = main(["record", "scenarios/diagnosis-success.yaml", "--reference", reference])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith(f"harness-lab record: {message}")
    assert err.count("\n") == 1


def test_an_unreadable_existing_cassette_is_exit_2_naming_its_line(
        library: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cassette_of(library).write_text("interactions:\n- 5\n", encoding="utf-8")
    code = main(["record", "scenarios/diagnosis-success.yaml", "--reference", str(REFERENCE)])
    err = capsys.readouterr().err
    assert code == 2
    assert err == ("harness-lab record: cassette cassettes/recorded-diagnosis-success.yaml:2: "
                   "interaction 0: must be a mapping, not int\n")


def test_the_help_names_the_default_mode_and_the_exit_codes(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["record", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "(default: once)" in out
    assert "exit codes: 0 recorded" in out and "2 usage error" in out
    assert "1 recording refused" in out


def test_a_fork_with_faults_is_not_recorded_over_the_cassette_it_shares(
        library: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = with_shipped_cassette(library)
    text = (ROOT / "scenarios" / "recorded" / "disconnect-after-second-tool.yaml").read_text(
        encoding="utf-8")
    fork = library / "scenarios" / "fork.yaml"
    fork.write_text(text.replace("../../cassettes/", "../cassettes/"), encoding="utf-8")
    code = main(["record", "scenarios/fork.yaml", "--reference", str(REFERENCE),
                 "--mode", "all"])
    err = capsys.readouterr().err
    assert code == 2
    assert err == ("harness-lab record: scenarios/fork.yaml: this scenario injects faults into "
                   "a replay of cassettes/recorded-diagnosis-success.yaml; record the scenario "
                   "without faults that uses the same cassette, then replay this one\n")
    assert cassette_of(library).read_bytes() == before


def test_a_cassette_whose_directory_is_a_file_is_exit_2_before_any_request(
        library: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (library / "cassettes").rmdir()
    (library / "cassettes").write_text("not a directory", encoding="utf-8")
    code = main(["record", "scenarios/diagnosis-success.yaml", "--reference", str(REFERENCE)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("harness-lab record: cassette cassettes/recorded-diagnosis-success"
                          ".yaml: cannot be written: ")
    assert err.count("\n") == 1


def test_a_scenario_that_is_not_recorded_is_one_line_and_exit_2(
        library: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain = library / "scenarios" / "plain.yaml"
    plain.write_text(missing_context("plain", "scripted"), encoding="utf-8")
    code = main(["record", "scenarios/plain.yaml", "--reference", str(REFERENCE)])
    err = capsys.readouterr().err
    assert code == 2
    assert err == ("harness-lab record: scenarios/plain.yaml: a recorded scenario needs "
                   "`recorded:` and `cassette:`\n")

"""URLs as messages and run logs show them: every password hidden, the rest as typed."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_lab.redact import shown_url, shown_words


@pytest.mark.parametrize(("typed", "shown"), [
    ("postgresql+psycopg://lab:s3cr3t@db.internal:5432/runs",
     "postgresql+psycopg://lab:***@db.internal:5432/runs"),
    ("https://user:tok3n@collector:4318", "https://user:***@collector:4318"),
    ("--persist=mysql://lab:p%40ss/w0rd@h/db", "--persist=mysql://lab:***@h/db"),
    ("postgresql://:s3cr3t@h/db", "postgresql://:***@h/db"),
    ("sent to http://a:b@one and https://c:d@two", "sent to http://a:***@one and https://c:***@two"),
], ids=["database", "endpoint", "an option's value", "no user", "two in one text"])
def test_a_password_in_a_url_is_hidden(typed: str, shown: str) -> None:
    assert shown_url(typed) == shown


@pytest.mark.parametrize("typed", [
    "postgresql://lab@db/runs", "sqlite:///runs.db", "http://127.0.0.1:4318",
    "scenarios/a:b@c.yaml", "user:pass@host",
], ids=["a user alone", "a file", "a port", "a path", "no scheme"])
def test_text_without_a_password_in_a_url_is_left_as_typed(typed: str) -> None:
    assert shown_url(typed) == typed


def test_a_command_line_is_shown_word_by_word() -> None:
    assert shown_words(["harness-lab", "sweep", "--persist", "postgresql://u:pw@h/db"]) == [
        "harness-lab", "sweep", "--persist", "postgresql://u:***@h/db"]



def test_a_command_that_fails_on_a_url_never_prints_its_password(
        capsys: pytest.CaptureFixture[str]) -> None:
    from harness_lab.cli import main

    library = Path(__file__).resolve().parent.parent / "scenarios" / "outcomes"
    assert main(["conform", "http://harness:s3cr3t@127.0.0.1:1", str(library)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("harness-lab conform: nothing answers at http://harness:***@127.0.0.1:1")
    assert "s3cr3t" not in err

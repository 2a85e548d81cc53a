"""What a message or a run log may show of a URL: never the password it carries.

A database URL (``postgresql://user:password@host/db``) or an OTLP endpoint with credentials
(``https://user:token@collector``) is printed in errors and recorded, with the command line,
in every run log; the password part of each is replaced by ``***`` first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["HIDDEN", "shown_url", "shown_words"]

HIDDEN = "***"
"""What stands where a password was."""

_USERINFO = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^/:@\s]*:)(?P<password>[^@\s]+?)@")


def shown_url(text: object) -> str:
    """``text`` with the password of every ``scheme://user:password@`` in it replaced by
    :data:`HIDDEN` (a password holding ``@`` must be percent-encoded in a URL, so the first
    ``@`` ends it)."""
    return _USERINFO.sub(rf"\g<head>{HIDDEN}@", str(text))


def shown_words(words: Iterable[str]) -> list[str]:
    """A command line as a run log records it: each word through :func:`shown_url`."""
    return [shown_url(word) for word in words]

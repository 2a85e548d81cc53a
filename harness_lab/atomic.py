"""Writing a file whole or not at all, for every output the toolkit writes where a user asked.

What is written goes to a temporary file beside the target, is flushed to disk and is then
renamed over the target (``os.replace``, atomic on one file system): the target holds its old
content or all of the new one, never part of it, whatever fails (a full disk, an exception,
Ctrl-C), and no temporary file is left. A replaced file keeps its mode, and a symbolic link
stays one (the file it points to is replaced); a new file gets the mode ``open`` would give
it. The target's directory must exist.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

__all__ = ["replacing", "write_atomically"]


@contextmanager
def replacing(path: str | os.PathLike[str], *, binary: bool = False) -> Iterator[IO[Any]]:
    """A file to write what replaces ``path`` into (UTF-8 text, or bytes with ``binary``);
    ``path`` is replaced when the block ends without an exception, and left as it was
    otherwise."""
    target = Path(path)
    if target.is_symlink():
        target = target.resolve()
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with (os.fdopen(fd, "wb") if binary else
              os.fdopen(fd, "w", encoding="utf-8")) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, mode)
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def write_atomically(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Replace ``path`` with ``data`` (text is written as UTF-8), whole or not at all."""
    with replacing(path, binary=isinstance(data, bytes)) as handle:
        handle.write(data)


def _umask() -> int:
    """The process's file creation mask (read by setting it, then restoring it)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask

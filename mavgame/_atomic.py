"""Durable file writes: a temporary file beside the target, flushed and fsynced, renamed over the target,
then the directory fsynced, so that a crash (``kill -9``, power loss) leaves either the old file or the new
one, never a torn one.

Every file a job writes whole (checkpoints, exported models, books, ``metrics.json``, ``policy.pt``) goes
through :func:`atomic_write`; files appended to as a job runs (logs, stores) are not written here.
"""
from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import IO, Any, Iterator, Optional, Union

__all__ = ["atomic_write", "write_bytes_atomic", "write_json_atomic", "fsync_dir"]

PathLike = Union[str, "os.PathLike[str]"]


def fsync_dir(path: PathLike) -> None:
    """fsync the directory holding ``path`` so that a rename in it is on disk (a no-op where the platform
    cannot open directories)."""
    d = os.path.dirname(os.path.abspath(os.fspath(path)))
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_write(path: PathLike, mode: str = "wb", encoding: Optional[str] = None) -> Iterator[IO[Any]]:
    """A file object to write ``path``'s new content to; on a clean exit the content is fsynced and renamed
    over ``path``, on an exception the temporary file is removed and ``path`` is left as it was.

    The temporary name carries the process id, so two processes writing the same target do not write into
    one temporary file (the last rename wins)."""
    if mode not in ("wb", "w"):
        raise ValueError(f"atomic_write mode must be 'wb' or 'w', got {mode!r}")
    path = os.fspath(path)
    tmp = f"{path}.tmp{os.getpid()}"
    f = open(tmp, mode, encoding=encoding if "b" not in mode else None)
    try:
        yield f
        f.flush()
        os.fsync(f.fileno())
        f.close()
        os.replace(tmp, path)
    except BaseException:
        f.close()
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(path)


def write_bytes_atomic(path: PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` durably (:func:`atomic_write`); returns the path."""
    with atomic_write(path) as f:
        f.write(data)
    return Path(path)


def write_json_atomic(path: PathLike, obj: Any, indent: Optional[int] = None, sort_keys: bool = True) -> Path:
    """Write ``obj`` as JSON to ``path`` durably (:func:`atomic_write`); returns the path."""
    with atomic_write(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=indent, sort_keys=sort_keys)
        if indent is not None:
            f.write("\n")
    return Path(path)

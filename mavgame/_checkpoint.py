"""PyTorch state files read as data, never as code.

Every ``.pt`` file mavgame reads (training checkpoints, AlphaZero checkpoints, ``policy.pt``, the policy RL
state) is loaded by :func:`load_state` with ``torch.load(weights_only=True)``: the unpickler builds tensors,
plain containers (dict, list, tuple, str, int, float, bool, None) and NumPy arrays, dtypes and scalars
(the random-number states and replay buffers), and refuses every other global *before* anything of it
runs. A file whose pickle names anything else (a ``__reduce__`` that calls ``os.system``, say) raises
:class:`UnsafeCheckpointError` naming the file and the global; nothing of it is executed.

:func:`save_state` writes such a file durably (:func:`mavgame._atomic.atomic_write`).
"""
from __future__ import annotations

import os
import pickle
from typing import Any, List

from ._atomic import atomic_write

__all__ = ["UnsafeCheckpointError", "load_state", "save_state"]


class UnsafeCheckpointError(ValueError):
    """A ``.pt`` file whose pickle names a Python object that mavgame's checkpoints never hold; it was
    refused without running any of it."""


def _numpy_globals() -> List[Any]:
    """The NumPy callables that rebuild arrays, dtypes and scalars (they construct data; they run no
    code of the file's choosing)."""
    import numpy as np

    try:
        from numpy._core import multiarray
    except ImportError:  # NumPy 1.x
        from numpy.core import multiarray  # type: ignore[no-redef]
    # bytes: protocol 2 pickles an empty bytes object (a NumPy array's empty buffer) as a call of bytes()
    out: List[Any] = [multiarray._reconstruct, multiarray.scalar, np.ndarray, np.dtype, bytes]
    dtypes = getattr(np, "dtypes", None)
    if dtypes is not None:
        out += [getattr(dtypes, n) for n in dir(dtypes) if n.endswith("DType") and isinstance(getattr(dtypes, n), type)]
    return out


def _unsafe_globals(path: str) -> List[str]:
    """The globals the file's pickle names that a weights-only load refuses (read from the pickle's
    opcodes; nothing is executed)."""
    import torch

    try:
        names = list(torch.serialization.get_unsafe_globals_in_checkpoint(path))
    except Exception:  # noqa: BLE001 - a file too broken to scan: the load's own message says why
        return []
    allowed = {f"{g.__module__}.{g.__qualname__}" for g in _numpy_globals()}
    return [n for n in names if n not in allowed]


def load_state(path: "os.PathLike[str] | str", what: str = "checkpoint", map_location: Any = "cpu") -> Any:
    """The object saved in the PyTorch file ``path``, loaded as data (``weights_only=True`` with NumPy
    arrays allowed).

    ``what`` names the kind of file in messages ("AlphaZero checkpoint", "policy training state").
    FileNotFoundError when there is no file; :class:`UnsafeCheckpointError` when its pickle names any other
    Python object (refused unexecuted); ValueError naming the file when it is not a readable PyTorch file.
    """
    import torch

    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no {what} at {path!r}")
    try:
        with torch.serialization.safe_globals(_numpy_globals()):
            return torch.load(path, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as e:
        bad = _unsafe_globals(path)
        if bad:
            raise UnsafeCheckpointError(
                f"{path!r}: refused to load this {what}: its pickle names {', '.join(bad)}, which no mavgame file "
                f"holds (a checkpoint is data: tensors, containers and NumPy arrays); nothing of it was run") from None
        msg = str(e)
        why = msg.split("WeightsUnpickler error:", 1)[1].strip().split("\n\n")[0] if "WeightsUnpickler error:" in msg \
            else msg.splitlines()[-1]
        raise ValueError(f"{path!r} is not a {what} (not a readable PyTorch file: {why})") from None
    except (RuntimeError, EOFError, OSError, ValueError, KeyError, AttributeError, TypeError) as e:
        raise ValueError(f"{path!r} is not a {what} (not a readable PyTorch file: {type(e).__name__}: {e})") from None


def save_state(obj: Any, path: "os.PathLike[str] | str") -> str:
    """``torch.save(obj)`` to ``path`` durably: a temporary file, fsynced, renamed over ``path``."""
    import torch

    path = os.fspath(path)
    with atomic_write(path) as f:
        torch.save(obj, f)
    return path

"""Thread counts while a reference backend generates: OpenBLAS's for the NumPy forward pass, torch's intra-op
threads for the torch one (each set for the duration of a block and restored after)."""
from __future__ import annotations


class _BlasThreads:
    """Set the number of OpenBLAS threads NumPy uses for the duration of a block (restored after).

    Small matrix products from many threads on a busy machine are several times slower than from one
    (measured: 9 ms against 1.1 ms per generated token for the small preset on 2 shared cores). Works with
    the OpenBLAS builds NumPy wheels bundle; a no-op where none is found."""

    _fns = None

    @classmethod
    def _find(cls):
        if cls._fns is None:
            cls._fns = ()
            try:
                import ctypes
                with open("/proc/self/maps") as f:
                    libs = sorted({ln.split()[-1] for ln in f if "openblas" in ln.lower() and "/" in ln})
                for path in libs:
                    lib = ctypes.CDLL(path)
                    for get, set_ in (("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
                                      ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
                                      ("openblas_get_num_threads", "openblas_set_num_threads")):
                        if hasattr(lib, get) and hasattr(lib, set_):
                            g, s = getattr(lib, get), getattr(lib, set_)
                            g.restype = ctypes.c_int
                            s.argtypes = [ctypes.c_int]
                            cls._fns = (g, s)
                            return cls._fns
            except (OSError, AttributeError):
                cls._fns = ()
        return cls._fns

    def __init__(self, n: int):
        self.n = int(n)
        self.old = None

    def __enter__(self):
        fns = self._find() if self.n > 0 else ()
        if fns:
            self.old = fns[0]()
            fns[1](self.n)
        return self

    def __exit__(self, *exc):
        if self.old is not None:
            self._find()[1](self.old)


def default_torch_threads() -> int:
    """Intra-op threads for torch inference when the caller gives none: the ``OMP_NUM_THREADS`` the user set
    (torch reads it too), else 1. The MAV models are small: at the batch sizes of search, per-op dispatch and
    thread hand-off dominate, and torch's default (every core) is 3-33x slower than one thread on a 2-core
    machine (issue 12); one thread per process also suits league and annotation worker pools."""
    import os
    try:
        n = int(os.environ.get("OMP_NUM_THREADS", ""))
    except ValueError:
        n = 0
    return n if n > 0 else 1


class _TorchThreads:
    """Set torch's intra-op thread count for the duration of a block (restored after; 0: leave it)."""

    def __init__(self, n: int):
        self.n = int(n)
        self.old = 0

    def __enter__(self):
        if self.n > 0:
            import torch
            self.old = torch.get_num_threads()
            if self.old != self.n:
                torch.set_num_threads(self.n)
        return self

    def __exit__(self, *exc):
        if self.n > 0 and self.old and self.old != self.n:
            import torch
            torch.set_num_threads(self.old)


__all__ = ["default_torch_threads"]

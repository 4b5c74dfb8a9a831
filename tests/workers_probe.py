"""Functions that worker processes run in tests/test_workers.py (importable by spawn and forkserver children)."""
import os
import sys


def threads(_=None):
    """(pid, OMP_NUM_THREADS, torch's intra-op threads or None, torch loaded before the call)."""
    had_torch = "torch" in sys.modules
    try:
        import torch
    except ImportError:
        return os.getpid(), os.environ.get("OMP_NUM_THREADS"), None, had_torch
    return os.getpid(), os.environ.get("OMP_NUM_THREADS"), torch.get_num_threads(), had_torch


def init_record(path):
    """An initializer: appends this worker's thread setting to a file."""
    with open(path, "a") as f:
        f.write(f"{os.environ.get('OMP_NUM_THREADS')}\n")

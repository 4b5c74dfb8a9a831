"""Shared timing for the peer benchmarks: interleaved repetitions, medians of wall and thread CPU time.

The machine these figures come from is shared and noisy, so every benchmark runs mavgame and its peer
in the same process, alternating (A B, B A, A B, ...), and reports the median of each side's repetitions,
both as wall-clock time and as CPU time of the measuring thread (``time.thread_time``): CPU time does not
count the time other processes hold the core.  Ratios are taken of the CPU-time medians.
"""
from __future__ import annotations

import statistics
import time
from typing import Callable, Dict, Tuple


def interleaved(fns: Dict[str, Callable[[], object]], reps: int, warmup: bool = True
                ) -> Dict[str, Tuple[float, float, object, float]]:
    """Calls every fn of `fns` `reps` times, interleaved (the order alternates each round);
    returns {name: (median wall seconds, median thread CPU seconds, last result, least thread CPU seconds)}."""
    names = list(fns)
    if warmup:
        for n in names:
            fns[n]()
    wall: Dict[str, list] = {n: [] for n in names}
    cpu: Dict[str, list] = {n: [] for n in names}
    last: Dict[str, object] = {}
    for r in range(max(1, reps)):
        for n in (names if r % 2 == 0 else names[::-1]):
            t0, c0 = time.perf_counter(), time.thread_time()
            last[n] = fns[n]()
            c1, t1 = time.thread_time(), time.perf_counter()
            wall[n].append(t1 - t0)
            cpu[n].append(c1 - c0)
    return {n: (statistics.median(wall[n]), statistics.median(cpu[n]), last[n], min(cpu[n])) for n in names}


def fmt_rate(x: float | None, unit: str = "/s") -> str:
    """A rate with thousands separators, or 'n/a'."""
    if x is None:
        return "n/a"
    if x >= 100:
        return f"{x:,.0f}{unit}"
    return f"{x:,.2f}{unit}"


def fmt_s(s: float) -> str:
    """Seconds in a readable unit."""
    if s < 1e-6:
        return f"{s * 1e9:.0f} ns"
    if s < 1e-3:
        return f"{s * 1e6:.2f} us"
    if s < 1.0:
        return f"{s * 1e3:.1f} ms"
    return f"{s:.2f} s"

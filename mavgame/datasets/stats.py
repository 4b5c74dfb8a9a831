"""Statistics of a position set (``mavgame data-stats DIR``): positions per ply and per phase, distinct
positions, terminal share and results, the distribution of move values and of position values (the best
move's value: won / drawn / lost for the player to move), and, from a generation's ``timing.json`` and
``progress.json``, annotation time per phase and the rate.

It reads the shards' complete lines, so it also describes a generation that is still running or was
interrupted (the lines past its last progress record included).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

from .records import MANIFEST

def _phases(game: str) -> Tuple[Tuple[str, int, int], ...]:
    """The game's phases by plies played (``GameInfo.phases``; Connect Four: thirds of the longest game);
    empty for games without (reported per ply only) and for an unknown game."""
    from ..games import registry
    try:
        return tuple(registry.get(game).phases)
    except ValueError:
        return ()


def _phase(game: str, ply: int) -> Optional[str]:
    for name, lo, hi in _phases(game):
        if lo <= ply <= hi:
            return name
    return None


def _position_value(values: Dict[str, float]) -> str:
    v = max(values.values())
    return "won" if v > 0.75 else "lost" if v < 0.25 else "drawn"


def position_set_stats(root) -> Dict[str, Any]:
    """The statistics of the position set in ``root`` (its ``train/`` and ``val/`` shards).  ValueError
    naming the directory if it holds none."""
    root = Path(root)
    files = sorted(root.glob("train/shard-*.jsonl")) + sorted(root.glob("val/shard-*.jsonl"))
    if not files:
        raise ValueError(f"{root}: no position shards (train/shard-*.jsonl) there")
    game = None
    for split in ("train", "val"):
        m = root / split / MANIFEST
        if m.exists():
            game = json.loads(m.read_text(encoding="utf-8")).get("game")
            break
    prog_path = root / "progress.json"
    prog = json.loads(prog_path.read_text(encoding="utf-8")) if prog_path.exists() else None
    if game is None and prog is not None:
        game = prog.get("signature", {}).get("game")
    game = game or "?"
    states: set = set()
    st: Dict[str, Any] = {"game": game, "records": 0, "train": 0, "val": 0, "duplicates": 0, "terminal": 0,
                          "results": {}, "by_ply": {}, "by_phase": {}, "moves_annotated": 0,
                          "move_values": {}, "position_values": {}, "position_values_by_phase": {}}
    for path in files:
        split = path.parent.name
        with open(path, encoding="utf-8") as f:
            for line in f:
                if not line.endswith("\n"):
                    break  # a torn last line of a generation killed mid-write
                r = json.loads(line)
                st["records"] += 1
                st[split] += 1
                if r["state"] in states:
                    st["duplicates"] += 1
                states.add(r["state"])
                ply = int(r.get("ply", 0))
                st["by_ply"][ply] = st["by_ply"].get(ply, 0) + 1
                ph = _phase(game, ply) or "all"
                st["by_phase"][ph] = st["by_phase"].get(ph, 0) + 1
                vals = r.get("values") or {}
                if not vals:
                    st["terminal"] += 1
                    res = r.get("result", "*")
                    st["results"][res] = st["results"].get(res, 0) + 1
                    continue
                st["moves_annotated"] += len(vals)
                for v in vals.values():
                    k = f"{int(float(v) * 8) / 8:.3f}"   # eighths (exact values 0, 0.5, 1 stay apart)
                    st["move_values"][k] = st["move_values"].get(k, 0) + 1
                pv = _position_value(vals)
                st["position_values"][pv] = st["position_values"].get(pv, 0) + 1
                bp = st["position_values_by_phase"].setdefault(ph, {})
                bp[pv] = bp.get(pv, 0) + 1
    st["distinct"] = len(states)
    st["terminal_share"] = st["terminal"] / max(1, st["records"])
    st["by_ply"] = dict(sorted(st["by_ply"].items()))
    st["move_values"] = dict(sorted(st["move_values"].items()))
    timing_path = root / "timing.json"
    if timing_path.exists():
        t = json.loads(timing_path.read_text(encoding="utf-8"))
        per: Dict[str, Dict[str, float]] = {}
        for ply, (n, hits, secs, slowest) in t.get("by_ply", {}).items():
            p = per.setdefault(_phase(game, int(ply)) or "all", {"annotations": 0, "from_cache": 0,
                                                                 "seconds": 0.0, "slowest": 0.0})
            p["annotations"] += n
            p["from_cache"] += hits
            p["seconds"] = round(p["seconds"] + secs, 3)
            p["slowest"] = max(p["slowest"], slowest)
        st["annotation_time"] = per
        st["annotation_ms_by_ply"] = {
            int(ply): round(1000 * secs / (n - hits), 2) if n > hits else 0.0
            for ply, (n, hits, secs, _) in sorted(t.get("by_ply", {}).items(), key=lambda kv: int(kv[0]))}
        st["cache_entries"] = t.get("cache_entries", 0)
    info = None
    if (root / "train" / MANIFEST).exists():
        info = (json.loads((root / "train" / MANIFEST).read_text(encoding="utf-8")).get("info") or {}).get("stats")
        st["finished"] = True
    elif prog is not None:
        info = dict(prog.get("stats", {}), seconds=prog.get("seconds"), games_done=prog.get("games_done"))
        st["finished"] = False
    if info:
        st["generation"] = {k: info.get(k) for k in ("games", "games_done", "seed", "epsilon", "random_opening",
                                                     "annotator", "seconds", "positions_seen") if k in info}
        secs = info.get("seconds")
        if secs:
            st["generation"]["positions_seen_per_second"] = round(info.get("positions_seen", 0) / secs, 2)
    return st


def format_stats(st: Dict[str, Any]) -> str:
    """The statistics as Markdown (the tables of docs/model.md)."""
    n = st["records"]
    lines = [f"{st['game']}: {n:,} records ({st['train']:,} train, {st['val']:,} validation), "
             f"{st['distinct']:,} distinct, {st['terminal']:,} terminal ({100 * st['terminal_share']:.1f}%; "
             + ", ".join(f"{k} {v:,}" for k, v in sorted(st["results"].items())) + f"), "
             f"{st['moves_annotated']:,} annotated moves"
             + ("" if st.get("finished", True) else " (generation not finished)") + ".", ""]
    g = st.get("generation")
    if g:
        lines += ["Generation: " + ", ".join(f"{k} {v}" for k, v in g.items()) + ".", ""]
    lines += ["| phase | positions | won | drawn | lost |", "| --- | --- | --- | --- | --- |"]
    for ph, cnt in st["by_phase"].items():
        pv = st["position_values_by_phase"].get(ph, {})
        k = sum(pv.values()) or 1
        lines.append(f"| {ph} | {cnt:,} | " + " | ".join(f"{100 * pv.get(x, 0) / k:.1f}%"
                                                          for x in ("won", "drawn", "lost")) + " |")
    lines += ["", "(won / drawn / lost: the value of the best move for the player to move, over the annotated "
              "positions of the phase)", ""]
    plies = list(st["by_ply"].items())
    lines += ["| ply | " + " | ".join(str(p) for p, _ in plies) + " |", "| --- |" + " --- |" * len(plies),
              "| positions | " + " | ".join(f"{c:,}" for _, c in plies) + " |"]
    if "annotation_ms_by_ply" in st:
        ms = st["annotation_ms_by_ply"]
        lines.append("| solve ms | " + " | ".join(f"{ms[p]:,.1f}" if p in ms else "" for p, _ in plies) + " |")
    lines += ["", "(solve ms: the mean time of the annotations the cache did not answer)", ""]
    lines += ["Move values: " + ", ".join(f"{k}: {v:,}" for k, v in st["move_values"].items()) + ".", ""]
    if "annotation_time" in st:
        lines += ["| phase | annotations | from the cache | solve seconds | mean ms | slowest s |",
                  "| --- | --- | --- | --- | --- | --- |"]
        for ph, p in st["annotation_time"].items():
            solved = p["annotations"] - p["from_cache"]
            mean = 1000 * p["seconds"] / solved if solved else 0.0
            lines.append(f"| {ph} | {p['annotations']:,} | {p['from_cache']:,} | {p['seconds']:,.1f} | "
                         f"{mean:.1f} | {p['slowest']:.2f} |")
        lines += ["", f"Annotation cache: {st['cache_entries']:,} positions.", ""]
    return "\n".join(lines)


__all__ = ["position_set_stats", "format_stats"]

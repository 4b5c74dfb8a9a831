"""Training data for MAV models: position sets and the data pipeline, one module per concern; this package hands
on the public names of its modules (each loaded on first use, so that importing one module loads no other).

Pipeline::

    games (self-play / epsilon-greedy, or PGN for chess)  ->  positions annotated by an engine
        ->  PositionWriter: sharded JSON-lines files + manifest.json (train/ and val/ split by position)
        ->  PositionStore: random access to every record (memory-mapped, shared by DataLoader workers)
        ->  MAVDataset (torch IterableDataset): batches of (tokens, loss mask) built with the MAV
            format's randomisation, deterministic by seed, split over workers without duplicates or gaps.

The modules, one concern each:

- :mod:`mavgame.datasets.records`: the record format (``validate_record``), ``position_split``, ``MANIFEST``
- :mod:`mavgame.datasets.store`: ``PositionWriter`` (resumable) and ``PositionStore``
- :mod:`mavgame.datasets.dataset`: the example order, ``MAVEncoder``, ``pad_batch``, ``MAVDataset``
- :mod:`mavgame.datasets.positions`: epsilon-greedy games, ``generate_positions`` (and its worker functions)
- :mod:`mavgame.datasets.ood`: out-of-distribution sets (``ood_positions``, ``random_chess_positions``,
  ``random_chess_position_set``)
- :mod:`mavgame.datasets.pgn`: chess positions from PGN files (``read_pgn``, ``positions_from_pgn``)
- :mod:`mavgame.datasets.search_data`: search trees for internal search (MAV-IS) and their training examples
- :mod:`mavgame.datasets.symmetry`: mirrored positions, moves and trees (Connect Four augmentation)
- :mod:`mavgame.datasets.stats`: statistics of a position set (``mavgame data-stats``)
- :mod:`mavgame.datasets.merge`: position sets merged by manifest (``python -m mavgame.datasets.merge``)
- :mod:`mavgame.annotators`: the game annotators (``make_annotator``, ``DEFAULT_ANNOTATOR_OPTIONS``)

"""
from __future__ import annotations

import importlib
from typing import Any, Dict, List, Tuple

#: public name -> (module of this package, or another package's for the annotators, attribute)
_NAMES: Dict[str, Tuple[str, str]] = {
    **{n: ("mavgame.annotators", n) for n in ("DEFAULT_ANNOTATOR_OPTIONS", "make_annotator")},
    **{n: (f"{__name__}.dataset", n) for n in ("Encoder", "ExampleOrder", "LazyTokenizer", "MAVDataset", "MAVEncoder",
                                                "batch_seed", "epoch_permutation", "mav_encoder", "pad_batch")},
    **{n: (f"{__name__}.positions", n) for n in ("PROGRESS", "PROGRESS_FORMAT", "generate_positions",
                                                  "play_annotated_game")},
    **{n: (f"{__name__}.ood", n) for n in ("ood_positions", "random_chess_positions", "random_chess_position_set")},
    **{n: (f"{__name__}.pgn", n) for n in ("positions_from_pgn", "read_pgn")},
    **{n: (f"{__name__}.records", n) for n in ("DATA_FORMAT", "MANIFEST", "position_split", "validate_record")},
    **{n: (f"{__name__}.store", n) for n in ("PositionStore", "PositionWriter")},
}

__all__ = list(_NAMES)


def __getattr__(name: str) -> Any:
    if name in _NAMES:
        module, attr = _NAMES[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> List[str]:
    return sorted(set(globals()) | set(_NAMES))

"""Training data for MAV models: the public names of the data pipeline, gathered from the modules that hold them.

Pipeline::

    games (self-play / epsilon-greedy, or PGN for chess)  ->  positions annotated by an engine
        ->  PositionWriter: sharded JSON-lines files + manifest.json (train/ and val/ split by position)
        ->  PositionStore: random access to every record (memory-mapped, shared by DataLoader workers)
        ->  MAVDataset (torch IterableDataset): batches of (tokens, loss mask) built with the MAV
            format's randomisation, deterministic by seed, split over workers without duplicates or gaps.

The modules, one concern each:

- :mod:`mavgame.model.records`: the record format (``validate_record``), ``position_split``, ``MANIFEST``
- :mod:`mavgame.model.store`: ``PositionWriter`` (resumable) and ``PositionStore``
- :mod:`mavgame.model.dataset`: the example order, ``MAVEncoder``, ``pad_batch``, ``MAVDataset``
- :mod:`mavgame.model.generate`: epsilon-greedy games, ``generate_positions`` (and its worker functions)
- :mod:`mavgame.model.ood`: out-of-distribution sets (``ood_positions``, ``random_chess_positions``,
  ``random_chess_position_set``)
- :mod:`mavgame.model.pgn`: chess positions from PGN files (``read_pgn``, ``positions_from_pgn``)
- :mod:`mavgame.annotators`: the game annotators (``make_annotator``, ``DEFAULT_ANNOTATOR_OPTIONS``)

"""
from __future__ import annotations

from ..annotators import DEFAULT_ANNOTATOR_OPTIONS, make_annotator
from .dataset import (Encoder, ExampleOrder, LazyTokenizer, MAVDataset, MAVEncoder, batch_seed, epoch_permutation,
                      mav_encoder, pad_batch)
from .generate import PROGRESS, PROGRESS_FORMAT, generate_positions, play_annotated_game
from .ood import ood_positions, random_chess_position_set, random_chess_positions
from .pgn import positions_from_pgn, read_pgn
from .records import DATA_FORMAT, MANIFEST, position_split, validate_record
from .store import PositionStore, PositionWriter

__all__ = ["DEFAULT_ANNOTATOR_OPTIONS", "make_annotator",
           "Encoder", "ExampleOrder", "LazyTokenizer", "MAVDataset", "MAVEncoder", "batch_seed",
           "epoch_permutation", "mav_encoder", "pad_batch",
           "PROGRESS", "PROGRESS_FORMAT", "generate_positions", "play_annotated_game",
           "ood_positions", "random_chess_positions", "random_chess_position_set", "positions_from_pgn", "read_pgn",
           "DATA_FORMAT", "MANIFEST", "position_split", "validate_record", "PositionStore", "PositionWriter"]

"""Deprecated: the Hex annotator moved to :mod:`mavgame.annotators.hex`."""
import warnings

from ..annotators.hex import DEFAULT_OPTIONS, MAX_SOLVER_SIZE, _centre_distance, hex_annotator, position_seed  # noqa: F401

warnings.warn("mavgame.model.hex_annotate is deprecated: use mavgame.annotators.hex", DeprecationWarning, stacklevel=2)

__all__ = ["hex_annotator", "position_seed", "DEFAULT_OPTIONS", "MAX_SOLVER_SIZE"]

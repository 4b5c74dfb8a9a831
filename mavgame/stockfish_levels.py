"""Deprecated alias of :mod:`mavgame.engines.stockfish_levels` (issue 11's package layout); removed after one release."""
from mavgame._moved import alias

alias(__name__, "mavgame.engines.stockfish_levels")

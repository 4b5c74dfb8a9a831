"""Deprecated alias of :mod:`mavgame.play.pgn` (issue 11's package layout); removed after one release."""
from mavgame._moved import alias

alias(__name__, "mavgame.play.pgn")

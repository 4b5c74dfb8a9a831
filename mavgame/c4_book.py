"""Deprecated alias of :mod:`mavgame.games.c4_book` (issue 11's package layout); removed after one release."""
from mavgame._moved import alias

alias(__name__, "mavgame.games.c4_book")

"""Deprecated alias of :mod:`mavgame.games.negamax` (issue 11's package layout); removed after one release."""
from mavgame._moved import alias

alias(__name__, "mavgame.games.negamax")

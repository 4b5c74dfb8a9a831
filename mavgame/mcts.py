"""Deprecated alias of :mod:`mavgame.search.mcts` (issue 11's package layout); removed after one release."""
from mavgame._moved import alias

alias(__name__, "mavgame.search.mcts")

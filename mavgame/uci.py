"""Deprecated alias of :mod:`mavgame.engines.uci` (issue 11's package layout); removed after one release."""
from mavgame._moved import alias

alias(__name__, "mavgame.engines.uci")

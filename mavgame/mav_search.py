"""Deprecated alias of :mod:`mavgame.mav.search_trace` (issue 11's package layout); removed after one release."""
from mavgame._moved import alias

alias(__name__, "mavgame.mav.search_trace")

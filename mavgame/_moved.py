"""The old flat module paths of mavgame (before the package layout of issue 11), kept for one release.

Each old module (``mavgame/agents.py``, ``mavgame/league.py``, ...) is two lines that call :func:`alias`:
importing it warns with a :class:`DeprecationWarning` naming the new path and gives the moved module itself
(``sys.modules``), so private names, monkeypatching and pickles that name the old path keep working."""
import importlib
import sys
import warnings


def alias(old: str, new: str) -> None:
    """Make module ``old`` (being imported) an alias of module ``new``, with a DeprecationWarning."""
    module = importlib.import_module(new)
    # stacklevel 3: the warning points at the import of the old module, not at this helper or the shim
    warnings.warn(f"{old} is deprecated: import {new}", DeprecationWarning, stacklevel=3)
    sys.modules[old] = module

"""Sphinx configuration of mavgame's API reference, generated from the docstrings.

Build (warnings are errors, as CI builds it)::

    python -m sphinx -W --keep-going -b html docs/api /tmp/mavgame-api

autosummary walks the package ``mavgame`` recursively (``:recursive:`` in index.rst), so a module that is
added or moved appears without an edit here; its pages are generated into ``docs/api/generated/`` (not
committed). Private modules (a name part starting with ``_``) are left out, ``mavgame._core`` (the C
extension) included: its classes that a public module re-exports (``mavgame.State``) are documented where
they are re-exported. An optional dependency that is not installed (PyTorch, Ray, python-chess, ...) is
mocked, so the reference builds without the extras.
"""
from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import os
import pkgutil
import re
import shutil
import sys
import types
from typing import Dict, List, Tuple

from sphinx.application import Sphinx
from sphinx.ext.autodoc.mock import mock
from sphinx.ext.napoleon import Config as NapoleonConfig
from sphinx.ext.napoleon.docstring import NumpyDocstring

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, ROOT)

import mavgame  # noqa: E402

project = "mavgame"
author = "the mavgame developers"
copyright = "the mavgame developers"
release = version = mavgame.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.viewcode",
]
templates_path = ["_templates"]
exclude_patterns = ["_build"]
html_theme = "alabaster"
html_static_path: List[str] = []
html_title = f"mavgame {release} API reference"

autosummary_generate = True
autosummary_generate_overwrite = True
autosummary_imported_members = False
autodoc_member_order = "bysource"
autodoc_typehints = "signature"  # the docstrings are prose, few with parameter fields: the types go in the signature
autodoc_default_options = {"show-inheritance": True}

# Optional dependencies (extras) that are not installed here are mocked (importing a module that needs one
# would fail); an installed one is imported for real.
_OPTIONAL = ["torch", "ray", "chess", "pyspiel", "gymnasium", "pettingzoo", "matplotlib", "safetensors",
             "pandas", "ipywidgets", "IPython", "transformers", "tokenizers"]
autodoc_mock_imports = [m for m in _OPTIONAL if importlib.util.find_spec(m) is None]

# autosummary imports every submodule it lists, mavgame.__main__ included, which would run the command line
# (with sphinx's own arguments): an empty module stands in for it (it has nothing to document).
sys.modules.setdefault("mavgame.__main__", types.ModuleType("mavgame.__main__"))


def _private(name: str) -> bool:
    """Whether a module name of the package has a private part (``mavgame._core``, ``mavgame.__main__``)."""
    return any(part.startswith("_") for part in name.split(".")[1:])


def _imports(modname: str) -> set:
    """The top-level names of the packages that module ``modname`` imports itself (anywhere in its file)."""
    spec = importlib.util.find_spec(modname)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return set()
    with open(spec.origin, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def _walk() -> Tuple[Dict[str, List[str]], Dict[str, Dict[str, str]]]:
    """Import every public module as autodoc will. Returns (re-exports, skipped).

    Re-exports: public module -> the names in its ``__all__`` whose objects are defined in a private module
    (``mavgame._core``, ...): autodoc skips imported members, so these are documented where they are
    re-exported (once, at the first public module that lists them).  Skipped: a module that does not import
    because an extra it imports is missing and mocked (``mavgame.compat.openspiel`` reads pyspiel's constants
    at import): package -> {module: why}; its page is left out, and its package's page says so.  Any other
    module that fails to import fails the build."""
    out: Dict[str, List[str]] = {}
    skipped: Dict[str, Dict[str, str]] = {}
    seen: set = set()
    with mock(autodoc_mock_imports):  # imported as autodoc imports them (a missing extra mocked)
        names = ["mavgame"] + [m.name for m in pkgutil.walk_packages(mavgame.__path__, "mavgame.")
                               if not _private(m.name)]
        for modname in names:
            try:
                mod = importlib.import_module(modname)
            except Exception as e:
                missing = sorted(_imports(modname) & set(autodoc_mock_imports))
                if not missing:  # not the fault of a missing extra: the build fails
                    raise
                parent, _, short = modname.rpartition(".")
                skipped.setdefault(parent, {})[short] = (f"it needs {', '.join(missing)}, not installed "
                                                         f"({type(e).__name__}: {e})")
                continue
            for attr in getattr(mod, "__all__", ()):
                obj = getattr(mod, attr, None)
                origin = getattr(obj, "__module__", None)
                if not (inspect.isclass(obj) or inspect.isroutine(obj)) or not origin or not _private(origin):
                    continue
                key = (origin, getattr(obj, "__qualname__", attr))
                if key not in seen:
                    seen.add(key)
                    out.setdefault(modname, []).append(attr)
    return out, skipped


_REEXPORTS, _SKIPPED = _walk()
for _parent, _modules in _SKIPPED.items():
    for _name, _why in _modules.items():
        print(f"mavgame API reference: {_parent}.{_name} left out: {_why}")

# The pages autosummary generates (one per module) are made anew by every build: a page of a module that has
# moved or gone would otherwise stay behind and fail to import.
shutil.rmtree(os.path.join(os.path.dirname(os.path.abspath(__file__)), "generated"), ignore_errors=True)
autosummary_context = {"reexports": _REEXPORTS, "skipped": _SKIPPED}


# Docstrings are plain reST, a few with NumPy-style sections (a heading over a line of dashes: Parameters):
# napoleon turns those into fields, and only those (the napoleon extension would also read "X: Y" in the first
# line of every attribute's docstring, "Board size parameter (0: the game's default)", as a type).
_NUMPY_STYLE = NapoleonConfig(napoleon_google_docstring=False, napoleon_numpy_docstring=True)


def _numpy_sections(app: Sphinx, what: str, name: str, obj: object, options: object, lines: List[str]) -> None:
    """``autodoc-process-docstring``: a docstring with a NumPy-style section, rewritten by napoleon in place."""
    if any(re.fullmatch(r"\s*-{3,}\s*", line) for line in lines):
        lines[:] = NumpyDocstring(lines, _NUMPY_STYLE, app, what, name, obj, options).lines()


def setup(app: Sphinx) -> None:
    """Sphinx's hook for a conf.py: connects the NumPy-style section reader."""
    app.connect("autodoc-process-docstring", _numpy_sections)

"""Progress bars: tqdm's notebook widget in Jupyter when ipywidgets is installed, text bars elsewhere,
and never a warning (``tqdm.auto`` warns "IProgress not found" in a notebook without ipywidgets and
then draws text bars anyway).  Every progress bar of mavgame comes from here::

    from ._progress import tqdm
    bar = tqdm(total=n, desc="games", unit="game")
"""
from __future__ import annotations

import warnings

__all__ = ["tqdm"]


def _tqdm_class():
    from tqdm.std import TqdmWarning
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TqdmWarning)   # TqdmExperimentalWarning is one too
        from tqdm.auto import tqdm as auto
    return auto


tqdm = _tqdm_class()

"""The MAV model: a reference decoder-only transformer, its training, export, growth, internal search (MAV-IS)
and inference.

PyTorch is optional for mavgame. ``MAVConfig``, ``MAVModel`` (loading exported models such as the one
shipped in ``mavgame/data``, generation on the NumPy backend), the agents and the data generation work
without it; the transformer and the training loop need ``torch``. The training data is in
:mod:`mavgame.datasets`, the IDP chess policy network in :mod:`mavgame.policy`. See docs/model.md.

    >>> from mavgame.model import MAVModel
    >>> model = MAVModel.load()                 # the shipped Connect Four model
"""
from .config import MAVConfig
from .inference import MAVModel

__all__ = ["MAVConfig", "MAVModel"]

"""The MAV model: a reference decoder-only transformer, its data pipeline, training, export and inference.

PyTorch is optional for mavgame. ``MAVConfig`` and the NumPy inference path of ``MAVModel`` (for exported
models such as the one shipped in ``mavgame/data``) work without it; the transformer, the dataset and the
training loop need ``torch`` (``pip install torch``).
"""
from .config import MAVConfig

__all__ = ["MAVConfig"]

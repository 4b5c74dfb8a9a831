"""Inference for exported MAV models: batched greedy generation with a KV cache, on three backends.

The modules, one concern each:

- :mod:`.mav_model`: ``MAVModel`` (load, generate, analyse), ``MAVOutput``, reading value entries of an output
- :mod:`.decode`: the token loop (``generate_ids``, grouped greedy decoding) and its ``Generation`` results
- :mod:`.backends`: the torch and native backends, and which devices they can use
- :mod:`.reference`: the NumPy forward pass (``NumpyTransformer``)
- :mod:`.threads`: OpenBLAS and torch thread counts while generating
- :mod:`.scoring`: mean and max value scoring of the bucket distributions
- :mod:`.shipped`: the models shipped in ``mavgame/data``
- :mod:`.metrics`: the paper's metrics on annotated positions (``evaluate_records``, ``trainer_metrics``)
"""
from .backends import NativeBackend, native_available, native_device, native_device_error
from .decode import Generation, generate_ids, grouped_argmax
from .mav_model import MAVModel, MAVOutput, game_of_prompt, value_entries
from .metrics import PLAIN, TRANSITION, evaluate_records, trainer_metrics
from .reference import NumpyTransformer
from .scoring import NUM_BUCKETS, bucket_midpoints, max_value, mean_value, value_scorer
from .shipped import SHIPPED_KINDS, shipped_model_path
from .threads import default_torch_threads

__all__ = ["MAVModel", "MAVOutput", "game_of_prompt", "value_entries", "Generation", "generate_ids",
           "grouped_argmax", "NativeBackend", "native_available", "native_device", "native_device_error",
           "NumpyTransformer", "default_torch_threads", "NUM_BUCKETS", "bucket_midpoints", "mean_value",
           "max_value", "value_scorer", "SHIPPED_KINDS", "shipped_model_path", "PLAIN", "TRANSITION",
           "evaluate_records", "trainer_metrics"]

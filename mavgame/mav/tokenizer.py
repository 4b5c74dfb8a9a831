"""The MAV tokenizer and its vocabulary (the C tokenizer, ``csrc/format``; ``mavgame/data/vocab_v<N>.json``)."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional, Sequence, Tuple, Union

import numpy as np

from .. import _core
from .values import BUCKETS

VOCAB_VERSION: int = _core.MAV_VOCAB_VERSION          # the default: MAV text, the shipped models (v1)
VOCAB_MAX_VERSION: int = _core.MAV_VOCAB_MAX_VERSION  # the newest: v2 adds the search-trace phrases
VOCAB_VERSIONS: Tuple[int, ...] = tuple(range(1, VOCAB_MAX_VERSION + 1))


def check_model_vocab(vocab_version: str, vocab_size: int) -> int:
    """The MAV vocabulary version a model file declares (its ``vocab_version`` metadata) checked against its
    vocabulary size (the C check the native loader makes): 0 for ``""`` (a model over other token ids), else
    the version; ValueError naming the value for an unknown version or a size that does not match it."""
    return _core.mav_vocab_check(str(vocab_version), int(vocab_size))


def version_of_size(vocab_size: int) -> int:
    """The MAV vocabulary version with ``vocab_size`` tokens; ValueError if there is none."""
    for v in VOCAB_VERSIONS:
        try:
            return check_model_vocab(str(v), vocab_size)
        except ValueError:
            continue
    raise ValueError(f"no MAV vocabulary has {vocab_size} tokens (v1..v{VOCAB_MAX_VERSION})")


def vocab_fingerprint(tokenizer: "Tokenizer") -> str:
    """A short hash of the vocabulary's token texts, recorded in a model file (detects a vocabulary changed under
    the same version)."""
    import hashlib
    h = hashlib.sha256("\n".join(tokenizer.vocab).encode("utf-8", "surrogateescape")).hexdigest()
    return h[:16]


def vocab_path(version: int = VOCAB_VERSION) -> Path:
    """Path of the checked-in vocabulary file ``mavgame/data/vocab_v<version>.json``."""
    return Path(__file__).resolve().parent.parent / "data" / f"vocab_v{version}.json"


class Tokenizer:
    """The fixed, versioned MAV vocabulary (encode/decode in C): ``version`` 1 (the default, MAV text) or 2
    (v1's tokens with the same ids, then the keywords of search traces as single "phrase" tokens).

    Token ids are int32. ``encode`` splits text deterministically (one token per move, per board field,
    per value bucket, per command) and ``decode(encode(s)) == s`` for every string. The control tokens
    ``<pad>`` (0), ``<bos>`` (1), ``<eos>`` (2) are never produced by ``encode`` and decode to ``""``.
    """

    def __init__(self, version: int = VOCAB_VERSION):
        self._tok = _core.MavTokenizer(version)
        self.version = self._tok.version
        self._vocab: Optional[List[str]] = None
        self._kinds: Optional[List[str]] = None

    pad_id = 0
    bos_id = 1
    eos_id = 2
    ctrl_base = 3  # <ctrl0>; bucket b is ctrl_base + b

    def __len__(self) -> int:
        return self._tok.size

    @property
    def size(self) -> int:
        return self._tok.size

    @property
    def vocab(self) -> List[str]:
        """Token texts by id (byte tokens as ``<0xNN>``)."""
        if self._vocab is None:
            self._vocab = self._tok.vocab()
        return self._vocab

    @property
    def kinds(self) -> List[str]:
        """Token kinds by id: control, value, char, markup, word, move, byte, phrase (v2)."""
        if self._kinds is None:
            self._kinds = self._tok.kinds()
        return self._kinds

    @property
    def bucket_ids(self) -> np.ndarray:
        """The 64 value token ids in bucket order."""
        return np.arange(self.ctrl_base, self.ctrl_base + BUCKETS, dtype=np.int32)

    def token_to_id(self, token: str) -> int:
        """Id of the token with exactly this text; KeyError if there is none."""
        i = self._tok.lookup(token)
        if i < 0:
            raise KeyError(f"{token!r} is not a token of the MAV vocabulary v{self.version}")
        return i

    def id_to_token(self, i: int) -> str:
        if not 0 <= int(i) < self.size:
            raise ValueError(f"token id {i} is not in 0..{self.size - 1}")
        return self.vocab[int(i)]

    def encode(self, text: Union[str, bytes]) -> np.ndarray:
        return self._tok.encode(text)

    def decode(self, ids) -> str:
        return self._tok.decode(ids)

    def decode_bytes(self, ids) -> bytes:
        return self._tok.decode_bytes(ids)

    def encode_batch(self, texts: Sequence[Union[str, bytes]], max_len: Optional[int] = None
                     ) -> Tuple[np.ndarray, np.ndarray]:
        """(ids[B, L] int32 padded with <pad>, lengths[B] int32); ValueError if a text exceeds max_len."""
        return self._tok.encode_batch(texts, max_len)

    def decode_batch(self, ids, lengths=None) -> List[str]:
        return self._tok.decode_batch(ids, lengths)

    def bucket_of(self, token_id: int) -> int:
        """Bucket index of a value token id, -1 for other tokens."""
        b = int(token_id) - self.ctrl_base
        return b if 0 <= b < BUCKETS else -1

    def to_json(self) -> dict:
        """The vocabulary as written to ``mavgame/data/vocab_v<version>.json``."""
        return vocab_json(self)

    def __repr__(self) -> str:
        return f"Tokenizer(version={self.version}, size={self.size})"


_DEFAULT_TOKENIZER: Optional[Tokenizer] = None


def _default_tokenizer() -> Tokenizer:
    global _DEFAULT_TOKENIZER
    if _DEFAULT_TOKENIZER is None:
        _DEFAULT_TOKENIZER = Tokenizer()
    return _DEFAULT_TOKENIZER


def vocab_json(tokenizer: Optional[Tokenizer] = None) -> dict:
    """The vocabulary as a JSON-able dict: version, special ids, token texts and kinds by id."""
    t = tokenizer or _default_tokenizer()
    return {
        "format": "mavgame-mav-vocab",
        "version": t.version,
        "size": t.size,
        "special": {"pad": t.pad_id, "bos": t.bos_id, "eos": t.eos_id, "ctrl0": t.ctrl_base},
        "tokens": list(t.vocab),
        "kinds": list(t.kinds),
    }

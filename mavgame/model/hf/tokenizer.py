"""The MAV tokenizer as a Hugging Face ``tokenizers`` tokenizer (``tokenizer.json``) with the same ids.

The MAV tokenizer (csrc/format/tokenizer.c) is deterministic and needs no merges or scores: at each position
the longest phrase (v2), value or markup token that starts there; else a maximal run of ``[A-Za-z0-9_]``,
one token when the whole run is a word or move token, else one character token per character; else the
byte's character token, or its byte token ``<0xNN>``. The same pipeline in ``tokenizers``:

- pre-tokenizer: one ``Split`` regex whose alternatives are, in this order, the phrase tokens, the value and
  markup tokens (each group longest first), ``[A-Za-z0-9_]+`` and any single character; every match is a
  piece, and the pieces are exactly the C encoder's steps;
- model: ``BPE`` with the MAV vocabulary, no merges, ``ignore_merges`` (a piece that is a token is that
  token, any other piece splits into characters: the word-run rule) and ``byte_fallback`` (a character that
  is no token becomes the byte tokens of its UTF-8 bytes);
- post-processor: ``<bos>`` first, as :meth:`mavgame.model.MAVModel.encode_prompt` reads a prompt;
- decoder: byte fallback, then the token texts joined.

The control tokens ``<pad>``, ``<bos>``, ``<eos>`` are special tokens; the saved configuration sets
``split_special_tokens`` so that their texts in an input are encoded as plain text, as the MAV tokenizer
does (it never produces a control id from text). Decoding differs from mavgame's only for byte tokens that
are not valid UTF-8 (``tokenizers`` decodes them to U+FFFD).

Importing this module imports nothing heavy; :func:`build_tokenizer` imports ``tokenizers``.
"""
from __future__ import annotations

import re
from typing import Any, List

#: the MAV tokenizer's control tokens (ids 0, 1, 2), special tokens of the HF tokenizer
SPECIAL_TOKENS = ("<pad>", "<bos>", "<eos>")


def split_pattern(vocab: List[str], kinds: List[str]) -> str:
    """The pre-tokenizer's regex for a MAV vocabulary (token texts and kinds by id, mavgame.mav.Tokenizer)."""
    def longest_first(group) -> List[str]:
        return sorted((s for s, k in zip(vocab, kinds) if k in group), key=len, reverse=True)

    fixed = longest_first(("phrase",)) + longest_first(("value", "markup"))
    return "".join(re.escape(s) + "|" for s in fixed) + r"[A-Za-z0-9_]+|[\s\S]"


def build_tokenizer(version: int) -> Any:
    """A ``tokenizers.Tokenizer`` giving the ids of ``mavgame.mav.Tokenizer(version)`` (``<bos>`` first when
    ``add_special_tokens`` is on, the default)."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers, processors

    from ... import mav
    t = mav.Tokenizer(version)
    vocab, kinds = list(t.vocab), list(t.kinds)
    ids = {s: i for i, s in enumerate(vocab)}
    if len(ids) != len(vocab):
        raise ValueError(f"MAV vocabulary v{version} has duplicate token texts")
    tk = Tokenizer(models.BPE(vocab=ids, merges=[], byte_fallback=True, ignore_merges=True))
    tk.pre_tokenizer = pre_tokenizers.Split(Regex(split_pattern(vocab, kinds)), behavior="isolated")
    tk.decoder = decoders.Sequence([decoders.ByteFallback(), decoders.Fuse()])
    tk.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in SPECIAL_TOKENS])
    bos = SPECIAL_TOKENS[t.bos_id]
    tk.post_processor = processors.TemplateProcessing(single=f"{bos} $A", pair=f"{bos} $A $B:1",
                                                      special_tokens=[(bos, t.bos_id)])
    tk.encode_special_tokens = True
    return tk


def build_fast_tokenizer(version: int, model_max_length: int) -> Any:
    """The ``transformers`` fast tokenizer over :func:`build_tokenizer` (what ``AutoTokenizer`` loads from an
    exported folder): special tokens named, ``split_special_tokens`` on, left padding (as mavgame batches
    prompts for generation)."""
    from transformers import PreTrainedTokenizerFast
    pad, bos, eos = SPECIAL_TOKENS
    return PreTrainedTokenizerFast(tokenizer_object=build_tokenizer(version), bos_token=bos, eos_token=eos,
                                   pad_token=pad, split_special_tokens=True, padding_side="left",
                                   model_max_length=model_max_length, clean_up_tokenization_spaces=False)


__all__ = ["SPECIAL_TOKENS", "split_pattern", "build_tokenizer", "build_fast_tokenizer"]

"""The MAV text format: prompts, targets, tokenizer, value buckets and a robust parser.

The multi-action-value (MAV) model of the MAV paper reads and writes game states as text. One call can
act as world model (the next state after a move), legal move generator, action-value function and
policy. Everything here is a thin layer over the C implementation in ``csrc/format``; the full
specification, with examples for every game, is ``docs/format.md``.

    >>> import mavgame
    >>> from mavgame import mav
    >>> s = mavgame.State("tictactoe")
    >>> print(mav.prompt(s, "%state %top_all %best_action"), end="")
    <mav game=tictactoe> %state %top_all %best_action </mav>
    [%state x .........]
    >>> values = {m: 0.5 for m in s.legal_moves}
    >>> values["b2"] = 0.6
    >>> print(mav.target(s, values, "%state %top_3 %best_action"), end="")
    [%top_3 b2:<ctrl38> a1:<ctrl32> b1:<ctrl32>]
    [%best_action b2]
    >>> r = mav.parse("tictactoe", mav.prompt(s, "%state %top_1") + "[%top_1 b2:<ctrl38>]\\n")
    >>> r.ok, r.top[0].move, r.top[0].bucket
    (True, 'b2', 38)

Values are win probabilities of the side to move after the move (draws count one half), written as
one of 64 bucket tokens ``<ctrl0>`` .. ``<ctrl63>``; see :func:`bucket`, :func:`score`.
"""
from __future__ import annotations

from .._core import State  # noqa: F401  (mav.State, as before the split)
from .examples import ExampleBatch, ExampleBuilder
from .metrics import metrics, metrics_from_results
from .parse import Issue, MoveEntry, ParseResult, StateSlot, parse
from .tokenizer import (VOCAB_MAX_VERSION, VOCAB_VERSION, VOCAB_VERSIONS, Tokenizer, check_model_vocab, version_of_size,
                        vocab_fingerprint, vocab_json, vocab_path)
from .values import (BUCKETS, bucket, bucket_token, bucket_value, score, win_prob_from_cp, win_prob_from_mate,
                     win_prob_from_result)
from .write import StateLike  # noqa: F401
from . import search_trace  # noqa: F401  (mav.search_trace: the internal-search traces)
from .write import (DEFAULT_COMMANDS, Annotation, example, header, move_tokens, prompt, prompts, state_from_text,
                    state_text, target)

__all__ = [
    "VOCAB_VERSION", "VOCAB_MAX_VERSION", "VOCAB_VERSIONS", "check_model_vocab", "version_of_size", "vocab_fingerprint", "BUCKETS", "DEFAULT_COMMANDS", "Tokenizer", "vocab_json", "vocab_path",
    "win_prob_from_cp", "win_prob_from_mate", "win_prob_from_result", "bucket", "bucket_value", "bucket_token",
    "score", "Annotation", "header", "prompt", "target", "example", "prompts", "state_text", "state_from_text",
    "move_tokens", "Issue", "MoveEntry", "StateSlot", "ParseResult", "parse", "metrics", "metrics_from_results",
    "ExampleBuilder", "ExampleBatch",
]

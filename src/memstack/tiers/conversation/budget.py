"""The history token budget, computed as Dify does before it reads a history.

Dify's ``PromptTransform`` gives the history whatever the model's context window leaves:
``context_size - max_output_tokens - prompt_tokens``, floored at 0; a model with no known
context size (None or 0) gets the fixed default of 2000 tokens. A missing ``max_tokens``
parameter counts as 0. The result is the ``max_token_limit`` of a history read.

A budget of 0 still yields one message: the history keeps at least one message whatever the
limit (Dify's guarantee, see :mod:`memstack.tiers.conversation.prune`).

>>> history_token_budget(8192, 1024, 500)
6668
>>> history_token_budget(4096, 4000, 500)
0
>>> history_token_budget(None, 1024, 500)
2000
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ...foundation.errors import InvalidValue
from ...foundation.limits import check_int, short_repr
from ...llm.tokens import TokenCounter, count_messages, token_counter

__all__ = ["DEFAULT_HISTORY_TOKENS", "TokenBudget", "history_token_budget", "resolve_token_limit"]

DEFAULT_HISTORY_TOKENS: Final = 2000
"""Dify's ``rest_tokens`` when the model's context size is unknown (and the default history limit)."""

Prompt = int | Sequence[Mapping[str, Any]]


def _count(value: object, name: str) -> int:
    return check_int(value, name)


def history_token_budget(
    context_size: int | None,
    max_output_tokens: int | None = None,
    prompt_tokens: Prompt = 0,
    *,
    counter: str | TokenCounter | None = None,
) -> int:
    """Tokens left for the history: ``max(context_size - max_output_tokens - prompt_tokens, 0)``.

    Args:
        context_size: the model's context window in tokens; None or 0 (unknown) gives
            :data:`DEFAULT_HISTORY_TOKENS` whatever the other arguments are.
        max_output_tokens: tokens reserved for the answer (the model's ``max_tokens``); None is 0.
        prompt_tokens: tokens of the current prompt, or the prompt's OpenAI chat messages,
            counted with ``counter`` (default ``o200k_base``) as :func:`~memstack.llm.tokens.count_messages`.

    Raises:
        InvalidValue: a count that is not an int >= 0, or a prompt that is neither a count nor
            a list of messages.
    """
    size = 0 if context_size is None else _count(context_size, "context_size")
    reserved = 0 if max_output_tokens is None else _count(max_output_tokens, "max_output_tokens")
    if isinstance(prompt_tokens, Sequence) and not isinstance(prompt_tokens, str | bytes):
        if not all(isinstance(m, Mapping) for m in prompt_tokens):
            raise InvalidValue("prompt_tokens: a list of prompt messages must hold only message dicts")
        used = count_messages(prompt_tokens, token_counter(counter))
    else:
        used = _count(prompt_tokens, "prompt_tokens")
    if not size:
        return DEFAULT_HISTORY_TOKENS
    return max(size - reserved - used, 0)


@dataclass(frozen=True, slots=True)
class TokenBudget:
    """The model figures a history budget is computed from (see :func:`history_token_budget`).

    Attributes:
        context_size: the model's context window (None or 0: unknown, the budget is 2000).
        max_output_tokens: tokens reserved for the answer.
        prompt_tokens: tokens of the current prompt (or its messages).
    """

    context_size: int | None
    max_output_tokens: int | None = None
    prompt_tokens: Prompt = 0

    @property
    def tokens(self) -> int:
        """The budget in tokens.

        Raises:
            InvalidValue: a count that is not an int >= 0.
        """
        return history_token_budget(self.context_size, self.max_output_tokens, self.prompt_tokens)

    @classmethod
    def coerce(cls, value: TokenBudget | Mapping[str, Any] | int) -> TokenBudget:
        """A budget from itself, a mapping of its fields, or a bare context size.

        Raises:
            InvalidValue: unknown fields or another kind of value.
        """
        if isinstance(value, TokenBudget):
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return cls(value)
        if isinstance(value, Mapping):
            unknown = set(value) - {"context_size", "max_output_tokens", "prompt_tokens"}
            if unknown:
                raise InvalidValue(f"token_budget: unknown fields {sorted(unknown)}")
            return cls(
                value.get("context_size"), value.get("max_output_tokens"), value.get("prompt_tokens", 0)
            )
        raise InvalidValue(
            f"token_budget {short_repr(value)}: expected a TokenBudget, a mapping of its fields or an int"
        )


def resolve_token_limit(
    max_token_limit: int | None, token_budget: TokenBudget | Mapping[str, Any] | int | None
) -> int:
    """The ``max_token_limit`` of a history read: the explicit limit, the budget's tokens, or 2000.

    Raises:
        InvalidValue: both are given, or either is invalid.
    """
    if token_budget is not None:
        if max_token_limit is not None:
            raise InvalidValue(
                f"max_token_limit {short_repr(max_token_limit)} and token_budget: give one of them, not both"
            )
        return TokenBudget.coerce(token_budget).tokens
    if max_token_limit is None:
        return DEFAULT_HISTORY_TOKENS
    return _count(max_token_limit, "max_token_limit")

"""LLM helpers: token counters (:mod:`memstack.llm.tokens`)."""

from __future__ import annotations

from .tokens import count_message, count_messages, estimate_tokens, token_counter

__all__ = ["count_message", "count_messages", "estimate_tokens", "token_counter"]

"""A LangGraph ``BaseStore`` on any memstack engine (the ``langgraph`` extra): a drop-in for
LangGraph's own stores. See :class:`MemstackStore` (its code: :mod:`memstack.agent.lgstore`, shared with
the ``/v1/store`` operations of the HTTP service)."""

from __future__ import annotations

from ...agent.lgstore import DEFAULT_SWEEP_MINUTES, MemstackStore

__all__ = ["DEFAULT_SWEEP_MINUTES", "MemstackStore"]

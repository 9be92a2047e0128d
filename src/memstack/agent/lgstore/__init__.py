"""The LangGraph store's core: :class:`MemstackStore`, a LangGraph ``BaseStore`` on any engine (the
``langgraph`` extra). Its public home is :mod:`memstack.doors.integrations.langgraph`; it lives here, below
the operations, so the ``/v1/store`` operations (:mod:`memstack.ops.store`) run the very same code.
"""

from __future__ import annotations

from .store import DEFAULT_SWEEP_MINUTES, MemstackStore

__all__ = ["DEFAULT_SWEEP_MINUTES", "MemstackStore"]

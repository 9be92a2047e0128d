"""The lifecycle of what the tiers hold: forgetting on request (:mod:`.forget`, with its
:class:`ForgetReport`), retention policies and their sweep (:mod:`.retention`, :mod:`.sweeper`),
tenant purge (:mod:`.purge`). Dream passes are :mod:`memstack.services.dream`.

Above the tiers and the memory's construction (:class:`memstack.services.tiers.Tiers`), below
:class:`memstack.Memory`, which offers them as ``mem.forget``, ``mem.dream`` and ``mem.retention``.
"""

from __future__ import annotations

from .report import TIERS, ForgetReport

__all__ = ["TIERS", "ForgetReport"]

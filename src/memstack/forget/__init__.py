"""Forgetting on request: subjects, ``Memory.forget``, deletion reports, retention, tenant purge."""

from .report import TIERS, ForgetReport

__all__ = ["TIERS", "ForgetReport"]

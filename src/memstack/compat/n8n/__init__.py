"""n8n's Simple Memory: per-workflow-session sliding windows with idle expiry."""

from __future__ import annotations

from .config import SimpleMemoryConfig
from .windows import AsyncSlidingWindows, SlidingWindows

__all__ = ["AsyncSlidingWindows", "SimpleMemoryConfig", "SlidingWindows"]

"""Dify's node memory: the memory of one workflow node inside a conversation."""

from __future__ import annotations

from .node_memory import AsyncNodeMemory, NodeMemory

__all__ = ["AsyncNodeMemory", "NodeMemory"]

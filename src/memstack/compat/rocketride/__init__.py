"""Pipeline nodes: memstack as a filter in RocketRide-style pipelines."""

from __future__ import annotations

from .node import PROFILES, NodeConfig, PersistentMemoryNode

__all__ = ["PROFILES", "NodeConfig", "PersistentMemoryNode"]

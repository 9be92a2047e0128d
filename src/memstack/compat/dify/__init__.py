"""Dify's node memory: the memory of one workflow node inside a conversation."""

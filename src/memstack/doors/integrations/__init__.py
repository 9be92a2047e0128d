"""Adapters for host frameworks (optional extras): ``langgraph`` (a ``BaseStore``) and
``llamaindex`` (a memory block). Import the submodule you need; each needs its extra."""

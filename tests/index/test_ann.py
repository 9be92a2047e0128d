"""The ANN graph library and the local embedder's runtime share one process, in either order."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from memstack.index import ann

if not ann.available() or importlib.util.find_spec("onnxruntime") is None:
    pytest.skip("needs usearch and onnxruntime (the embeddings extra)", allow_module_level=True)

# A fresh interpreter: the crash this guards against is a segmentation fault at import time.
_PROGRAM = """
from memstack.index.ann import AnnIndex
import numpy as np
index = AnnIndex(4)
index.extend(["a"], np.ones((1, 4), dtype=np.float32))
import onnxruntime
print("both loaded", onnxruntime.get_device())
"""


def test_building_a_graph_then_loading_onnxruntime_keeps_the_process_alive() -> None:
    done = subprocess.run([sys.executable, "-c", _PROGRAM], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "both loaded" in done.stdout

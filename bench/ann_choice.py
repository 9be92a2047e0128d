"""Which approximate nearest-neighbour library backs long-term memory's big scopes: measured here.

For each candidate installed (usearch, hnswlib, faiss-cpu, voyager) and each size, on clustered
384-dimensional unit vectors (a sentence embedder's are clustered, not uniform): build time, query
p50 (one query at a time, as a search asks), recall@10 against the exact answer, and the bytes the
index holds per vector (its serialised size). Each library is set up with 8-bit vectors where it has
them (usearch ``i8``, faiss ``HNSW,SQ8``, voyager ``E4M3``; hnswlib stores float32 only), M=16
and efConstruction=64/efSearch=64 alike, so the figures compare the libraries, not their settings.

    python bench/ann_choice.py --smoke          # 2,000 vectors, seconds
    python bench/ann_choice.py --quick          # 20,000
    python bench/ann_choice.py --sizes 20000 100000

``rescored``: the recall of the 10 best by exact cosine among 4 x 10 candidates (how memstack
uses the index). Ends with ``RESULT key=value ...`` (``<lib>_<size>_recall``, ``_rescored``,
``_p50_us``, ``_build_s``, ``_bytes``).
A library not installed is skipped and said so.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]
DIM = 384
M, EF_BUILD, EF_SEARCH, K, OVER = 16, 64, 64, 10, 4


def corpus(n: int, queries: int, seed: int = 7) -> tuple[F32, F32]:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((max(8, n // 200), DIM)).astype(np.float32)
    pick = rng.integers(0, len(centres), n + queries)
    data = centres[pick] + 0.6 * rng.standard_normal((n + queries, DIM)).astype(np.float32)
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    return data[:n], data[n:]


def exact(data: F32, queries: F32) -> npt.NDArray[np.int64]:
    sims = queries @ data.T
    return np.argsort(-sims, axis=1)[:, :K]


def _file_bytes(save: Callable[[str], object]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "index")
        save(path)
        return os.path.getsize(path)


Search = Callable[[F32, int], list[int]]


def run_usearch(data: F32) -> tuple[Search, Callable[[str], object]]:
    from usearch.index import Index

    index = Index(
        ndim=DIM, metric="cos", dtype="i8", connectivity=M, expansion_add=EF_BUILD, expansion_search=EF_SEARCH
    )
    index.add(np.arange(len(data)), data)
    return (lambda q, k: index.search(q, k).keys.tolist()), index.save


def run_hnswlib(data: F32) -> tuple[Search, Callable[[str], object]]:
    import hnswlib

    index = hnswlib.Index(space="ip", dim=DIM)
    index.init_index(max_elements=len(data), M=M, ef_construction=EF_BUILD, allow_replace_deleted=True)
    index.add_items(data, np.arange(len(data)))
    index.set_ef(EF_SEARCH)
    return (lambda q, k: index.knn_query(q, k)[0][0].tolist()), index.save_index


def run_faiss(data: F32) -> tuple[Search, Callable[[str], object]]:
    import faiss

    index = faiss.index_factory(DIM, f"HNSW{M},SQ8", faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = EF_BUILD
    index.train(data)
    index.add(data)
    index.hnsw.efSearch = EF_SEARCH
    return (lambda q, k: index.search(q[None, :], k)[1][0].tolist()), (lambda p: faiss.write_index(index, p))


def run_voyager(data: F32) -> tuple[Search, Callable[[str], object]]:
    import voyager

    index = voyager.Index(
        voyager.Space.Cosine, num_dimensions=DIM, M=M, ef_construction=EF_BUILD,
        storage_data_type=voyager.StorageDataType.E4M3,
    )  # fmt: skip
    index.add_items(data, np.arange(len(data)))
    return (lambda q, k: index.query(q, k, query_ef=max(EF_SEARCH, k))[0].tolist()), index.save


LIBS = {"usearch": run_usearch, "hnswlib": run_hnswlib, "faiss": run_faiss, "voyager": run_voyager}


def measure(name: str, data: F32, queries: F32, truth: npt.NDArray[np.int64]) -> dict[str, float]:
    start = time.perf_counter()
    search, save = LIBS[name](data)
    build = time.perf_counter() - start
    times, hits, rescored = [], 0, 0
    for q, want in zip(queries, truth, strict=True):
        t0 = time.perf_counter()
        got = search(q, K)
        times.append(time.perf_counter() - t0)
        hits += len(set(got) & set(want.tolist()))
        # memstack's way: OVER x K candidates, re-scored with the exact float cosines
        wide = np.array([i for i in search(q, OVER * K) if i >= 0])
        best = wide[np.argsort(-(data[wide] @ q))[:K]]
        rescored += len(set(best.tolist()) & set(want.tolist()))
    return {
        "build_s": build,
        "p50_us": float(np.percentile(times, 50)) * 1e6,
        "recall": hits / (K * len(queries)),
        "rescored": rescored / (K * len(queries)),
        "bytes": _file_bytes(save) / len(data),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--sizes", type=int, nargs="*", default=[20_000, 100_000])
    parser.add_argument("--libs", nargs="*", default=list(LIBS))
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    sizes = [2_000] if args.smoke else [20_000] if args.quick else args.sizes
    queries_n = 50 if args.smoke else args.queries
    module = {"usearch": "usearch", "hnswlib": "hnswlib", "faiss": "faiss", "voyager": "voyager"}
    libs = [lib for lib in args.libs if importlib.util.find_spec(module[lib]) is not None]
    for lib in [lib for lib in args.libs if lib not in libs]:
        print(f"{lib}: not installed, skipped")
    result: dict[str, float] = {"libraries": float(len(libs))}
    if len(libs) > 1:  # one process per library: two OpenMP runtimes in one process crashed here
        for lib in libs:
            argv = [sys.executable, __file__, "--libs", lib, "--queries", str(args.queries), "--sizes"]
            argv += [str(n) for n in sizes]
            if args.smoke:
                argv.append("--smoke")
            out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
            for line in out.splitlines():
                if line.startswith("RESULT "):
                    pairs = (kv.split("=") for kv in line.split()[1:])
                    result.update((k, float(v)) for k, v in pairs if k != "libraries")
                else:
                    print(line, flush=True)
        print("RESULT " + " ".join(f"{k}={v:.3f}" for k, v in result.items()))
        return
    for n in sizes:
        data, queries = corpus(n, queries_n)
        truth = exact(data, queries)
        for lib in libs:
            got = measure(lib, data, queries, truth)
            print(
                f"{lib:8} n={n:>7}: build {got['build_s']:7.2f} s  p50 {got['p50_us']:7.1f} us  "
                f"recall@10 {got['recall']:.3f} (x{OVER} re-scored {got['rescored']:.3f})  "
                f"{got['bytes']:6.0f} B/vector"
            )
            result.update({f"{lib}_{n}_{key}": value for key, value in got.items()})
    print("RESULT " + " ".join(f"{k}={v:.3f}" for k, v in result.items()))


if __name__ == "__main__":
    main()

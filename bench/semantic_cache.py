"""Semantic cache around chat calls: hit latency, miss overhead, paraphrase hits and false hits.

    python bench/semantic_cache.py [--url URL] [--quick | --smoke] [--threshold T]

One engine (default: a temporary SQLite file) holds one cache of 10,000 prompts ("What is the
{aspect} of {subject}?", 100 subjects x 100 aspects), stored as a wrapped chat stores them (same
cache key, vectors embedded in batches to save set-up time). The embedder is the local MiniLM
(``memstack[embeddings]``; the fake hashed embedder when it is missing, said in the output).
The chat is a real OpenAI-compatible stub server on a loopback port, called over HTTP.

Timed, through ``cache.wrap(chat)``:

* paraphrases of stored prompts ("Could you tell me {subject}'s {aspect}?"): hits;
* unrelated questions (other topics): misses, each calling the stub and storing its answer
  (only the calls that reached the stub count: a repeat of an earlier unrelated question hits).

Figures (p50 over the calls): ``hit_p50_ms`` and ``miss_overhead_p50_ms`` are the cache's own
work (index lookup, entry read, counters; on a miss also the write), without the embedding of
the query, which is the embedder's cost whatever the cache does and is reported on its own
(``embed_p50_ms``); ``hit_total_p50_ms`` is the whole wrapped call on a hit. Rates at the
threshold used: ``hit_rate_paraphrase`` = paraphrases answered with THEIR prompt's answer;
``false_hit_rate`` = unrelated questions or paraphrases answered with another prompt's answer;
``near_miss_false_hit_rate`` = paraphrases of a subject/aspect pair never stored (same phrasing,
the hard case) that would be answered from the cache. A table gives the rates at other
thresholds, from the same similarities (computed before the timed calls store anything).
``--quick``: 1,000 prompts and 100 lookups of each kind; ``--smoke``: 50 prompts and 5 lookups.
Targets on SQLite and Redis at 10k entries: ``hit_p50_ms <= 5`` and ``miss_overhead_p50_ms <= 5``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from _smoke import add_smoke, smoke_tag  # bench/ is on sys.path when the script runs
from memstack.engines import open_engine
from memstack.search.embedders import Embedder, FakeEmbedder, available_local_embedder
from memstack.tiers.shared import SemanticCache
from memstack.tiers.shared.cached_chat import cache_key

SUBJECTS = (  # noqa: SIM905 - a word list reads better as one string
    "Paris Rome Berlin Madrid Lisbon Vienna Prague Warsaw Athens Dublin Oslo Stockholm Helsinki "
    "Copenhagen Amsterdam Brussels Zurich Budapest Bucharest Sofia Istanbul Cairo Nairobi Lagos "
    "Accra Dakar Tunis Casablanca Johannesburg Mumbai Delhi Karachi Dhaka Bangkok Hanoi Manila "
    "Jakarta Singapore Seoul Tokyo Osaka Beijing Shanghai Sydney Melbourne Auckland Toronto "
    "Montreal Vancouver Chicago Boston Seattle Denver Houston Miami Mexico Lima Bogota Santiago "
    "Quito Caracas Havana Reykjavik Tallinn Riga Vilnius Kyiv Minsk Tbilisi Yerevan Baku Tehran "
    "Baghdad Riyadh Doha Dubai Muscat Kabul Tashkent Almaty Ulaanbaatar Kathmandu Colombo Yangon "
    "Phnom-Penh Vientiane Taipei Hong-Kong Macau Perth Brisbane Adelaide Wellington Fiji Samoa "
    "Tonga Hawaii Alaska Greenland Iceland Svalbard"
).split()
ASPECTS = (  # noqa: SIM905 - a phrase list reads better as one string
    "population|average rainfall|national dish|oldest building|main airport|official language|"
    "currency|time zone|highest point|biggest museum|founding year|football club|main river|"
    "average winter temperature|typical breakfast|public transport|tallest tower|main university|"
    "famous festival|local beer|traditional dance|main export|area in square kilometres|mayor|"
    "nickname|best viewpoint|oldest market|main cathedral|central square|largest park|zoo|"
    "opera house|main library|national park nearby|main port|railway station|history|climate|"
    "crime rate|cost of living|average rent|minimum wage|tax rate|literacy rate|life expectancy|"
    "birth rate|main religion|famous author|famous painter|famous composer|famous scientist|"
    "local cheese|street food|coffee culture|wine region|ski resort nearby|beach nearby|"
    "mountain range nearby|lake nearby|island nearby|bridge|castle|palace|monument|cemetery|"
    "stadium|concert hall|shopping street|nightlife district|old town|skyline|flag|coat of arms|"
    "motto|anthem|sister city|twin town|patron saint|main newspaper|television channel|"
    "radio station|tech industry|car industry|fashion week|film festival|marathon|"
    "cycling network|tram system|metro length|bus company|taxi fares|water quality|air quality|"
    "recycling rate|green spaces|tourist numbers|hotel prices|emergency number|postal code|"
    "dialing code|driving side"
).split("|")
TOPICS = (  # noqa: SIM905 - a phrase list reads better as one string
    "bake sourdough bread|fix a flat bicycle tire|train a puppy to sit|learn to play the guitar|"
    "write a cover letter|change a car battery|grow tomatoes on a balcony|knit a scarf|"
    "meditate for beginners|clean a cast iron pan|set up a home network|file a tax return|"
    "brew espresso at home|paint a bedroom wall|tie a bowline knot|prepare for a marathon|"
    "install a ceiling fan|remove a wine stain|write unit tests in Python|negotiate a salary"
).split("|")
PEOPLE = ("a beginner", "a child", "a retiree", "a student", "a busy parent", "someone on a budget")


def prompt(subject: str, aspect: str) -> str:
    return f"What is the {aspect} of {subject}?"


def paraphrase(subject: str, aspect: str) -> str:
    return f"Could you tell me {subject}'s {aspect}?"


class _Stub(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        question = body["messages"][-1]["content"]
        reply = json.dumps(
            {
                "id": "chatcmpl-stub",
                "object": "chat.completion",
                "model": body.get("model", "stub"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": f"Answer: {question}"},
                        "finish_reason": "stop",
                    }
                ],
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: Any) -> None:
        pass


class StubChat:
    """An OpenAI-compatible chat client on one keep-alive loopback connection."""

    model = "stub-model"

    def __init__(self, port: int) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        self.seconds = 0.0  # time spent in the last call

    def __call__(self, messages: list[dict[str, Any]], tools: Any = None, **options: Any) -> Any:
        start = time.perf_counter()
        body = json.dumps({"model": self.model, "messages": messages, **options})
        self.conn.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
        reply = json.loads(self.conn.getresponse().read())
        self.seconds = time.perf_counter() - start
        return reply


class TimedEmbedder:
    """Wraps an embedder and keeps the time of its last call."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.seconds = 0.0

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Any) -> Any:
        start = time.perf_counter()
        out = self.inner.embed(texts)
        self.seconds = time.perf_counter() - start
        return out


def p50(values: list[float]) -> float:
    return statistics.median(values) * 1000 if values else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="engine URL (default: a temporary SQLite file)")
    parser.add_argument("--quick", action="store_true", help="fewer prompts and lookups; < 60 s")
    parser.add_argument(
        "--threshold", type=float, default=0.92, help="similarity threshold (RubyLLM's default)"
    )
    add_smoke(parser)
    args = parser.parse_args()
    rng = random.Random(7)
    every = [(s, a) for a in ASPECTS for s in SUBJECTS]
    rng.shuffle(every)
    pairs = every[: 50 if args.smoke else 1000 if args.quick else 10_000]
    near = every[len(pairs) :]  # same phrasing, a subject/aspect pair never stored
    lookups = 5 if args.smoke else 100 if args.quick else 500
    local = available_local_embedder()
    embedder = TimedEmbedder(local if local is not None else FakeEmbedder(dim=256))
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Stub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    chat = StubChat(server.server_address[1])
    with tempfile.TemporaryDirectory() as tmp:
        url = args.url or f"sqlite:///{Path(tmp) / 'bench.db'}"
        engine = open_engine(url)
        if args.url:
            engine.flush()
        cache = SemanticCache(engine, "bench", embedder=embedder, threshold=args.threshold)
        cache.clear()
        start = time.perf_counter()
        keys = [cache_key(chat.model, [], prompt(s, a)) for s, a in pairs]
        for first in range(0, len(keys), 256):
            chunk = keys[first : first + 256]
            vectors = embedder.inner.embed(chunk)
            for key, vector in zip(chunk, vectors, strict=True):
                cache.put(key, {"choices": [{"message": {"content": f"cached: {key}"}}]}, vector=vector)
        loaded = time.perf_counter() - start
        wrapped = cache.wrap(chat)
        cache.search("warm up the index")  # builds this process's index once, outside the timing
        probes = rng.sample(pairs, lookups)
        unrelated = [
            f"How do I {rng.choice(TOPICS)} as {rng.choice(PEOPLE)}, tip {i}?" for i in range(lookups)
        ]
        # Similarities first, on a second instance (its own remembered vectors): nothing stored yet.
        probe = SemanticCache(engine, "bench", embedder=embedder.inner)
        sims_para = []
        for subject, aspect in probes:
            best = probe.lookup(probe.embed(cache_key(chat.model, [], paraphrase(subject, aspect))), 0.0)
            expected = f"cached: {cache_key(chat.model, [], prompt(subject, aspect))}"
            right = best is not None and best["response"]["choices"][0]["message"]["content"] == expected
            sims_para.append((best["similarity"] if best else 0.0, right))
        sims_near = []
        for subject, aspect in rng.sample(near, min(lookups, len(near))):
            best = probe.lookup(probe.embed(cache_key(chat.model, [], paraphrase(subject, aspect))), 0.0)
            sims_near.append(best["similarity"] if best else 0.0)
        sims_unrelated = []
        for question in unrelated:
            best = probe.lookup(probe.embed(cache_key(chat.model, [], question)), 0.0)
            sims_unrelated.append(best["similarity"] if best else 0.0)
        hit_own, hit_total, embeds = [], [], []
        for subject, aspect in probes:
            question = paraphrase(subject, aspect)
            start = time.perf_counter()
            reply = wrapped([{"role": "user", "content": question}])
            total = time.perf_counter() - start
            embeds.append(embedder.seconds)
            content = reply["choices"][0]["message"]["content"]
            if content.startswith("cached: "):
                hit_total.append(total)
                hit_own.append(total - embedder.seconds)
        miss_own = []
        for question in unrelated:
            chat.seconds = 0.0
            start = time.perf_counter()
            wrapped([{"role": "user", "content": question}])
            total = time.perf_counter() - start
            if chat.seconds > 0:  # the stub was called: a miss (similar questions asked before hit)
                miss_own.append(total - chat.seconds - embedder.seconds)
        entries = cache.stats()["entries"]
        engine.close()
    server.shutdown()

    def rates(threshold: float) -> tuple[float, float]:
        right = sum(1 for s, ok in sims_para if s >= threshold and ok) / len(sims_para)
        wrong = sum(1 for s, ok in sims_para if s >= threshold and not ok)
        wrong += sum(1 for s in sims_unrelated if s >= threshold)
        return right, wrong / (len(sims_para) + len(sims_unrelated))

    def near_rate(threshold: float) -> float:
        return sum(1 for s in sims_near if s >= threshold) / len(sims_near) if sims_near else float("nan")

    print(f"engine={url.split(':')[0]} model={embedder.model_id} entries={entries} loaded in {loaded:.1f}s")
    print(f"hits: {len(hit_own)}/{lookups} p50 {p50(hit_own):.3f} ms (cache) {p50(hit_total):.3f} ms (total)")
    print(
        f"misses: {len(miss_own)}/{lookups} cache overhead p50 {p50(miss_own):.3f} ms; "
        f"embed p50 {p50(embeds):.3f} ms"
    )
    print(f"near misses: {len(sims_near)} paraphrases of pairs never stored (another subject or aspect)")
    print("threshold  paraphrase_hit_rate  false_hit_rate  near_miss_false_hit_rate")
    for threshold in (0.75, 0.80, 0.85, 0.88, 0.90, 0.92, 0.95):
        right, wrong = rates(threshold)
        print(f"{threshold:9.2f}  {right:19.3f}  {wrong:14.3f}  {near_rate(threshold):24.3f}")
    right, wrong = rates(args.threshold)
    print(
        f"RESULT engine={url.split(':')[0]} entries={entries} hit_p50_ms={p50(hit_own):.3f} "
        f"miss_overhead_p50_ms={p50(miss_own):.3f} hit_total_p50_ms={p50(hit_total):.3f} "
        f"embed_p50_ms={p50(embeds):.3f} hit_rate_paraphrase={right:.3f} false_hit_rate={wrong:.3f} "
        f"near_miss_false_hit_rate={near_rate(args.threshold):.3f} threshold={args.threshold}"
        f"{smoke_tag(args)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

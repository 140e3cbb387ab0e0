"""Benchmark: rag_lib's BM25 keyword search against the `rank_bm25` reference.

What is measured, on the sentence corpus of the real HotpotQA sample (about 50k sentences):

* Speed. Queries per second of `rank_bm25.BM25Okapi.get_scores` (pure Python, one query at a
  time) and of `rag_lib.retrieval.KeywordIndex.search_tokens(queries, k=10)` (bm25s, all queries
  in one vectorized call), over the same question texts. For honesty the per-query loop speed of
  rag_lib (`search_tokens([q])` one at a time) is reported too. `speedup = rag_qps / rank_bm25_qps`
  uses the batched call. Both run in this process on the same token lists, so the speed of the
  machine cancels out of the ratio; absolute q/s are only indicative.
* Agreement. For every benchmark query the full score vectors `KeywordIndex.scores(q)` and
  `BM25Okapi.get_scores(q)` (k1=1.5, b=0.75, epsilon=0, i.e. plain Robertson idf) are compared:
  the largest absolute difference, and whether the top-10 documents are the same up to ties
  (documents whose rag_lib scores are within 1e-6 of each other may come in any order, and the
  group cut by rank 10 need only be a consistent subset).

Targets: speedup >= 100, max_abs_diff <= 1e-6, top-10 identical for every query. This is a
benchmark, not a unit test: it needs the real data sample and takes a minute or two.
The last line printed is `key=value` pairs; the exit code is 0 only when all targets are met.

Usage: cd /work/main && .venv/bin/python benchmarks/bm25.py [--queries 400] [--repeat 5]
"""
import argparse, statistics, sys, time

import numpy as np
from rank_bm25 import BM25Okapi

from rag_lib.core import data_dir
from rag_lib.corpus import Corpus
from rag_lib.data import load
from rag_lib.retrieval import KeywordIndex, tokenize

try: from tqdm import tqdm
except ImportError: tqdm = None

K, TOL = 10, 1e-6
TARGETS = dict(speedup=100.0, max_abs_diff=TOL, top10_identical=1.0)


def top_k(scores: np.ndarray, k: int = K) -> np.ndarray:
    "Indices of the `k` highest scores, best first (stable, so ties keep document order)."
    return np.argsort(-scores, kind='stable')[:k]


def same_up_to_ties(s: np.ndarray, a: np.ndarray, b: np.ndarray, tol: float = TOL) -> bool:
    """Whether top-k lists `a` (rag_lib) and `b` (reference) agree once documents tied under the
    rag_lib scores `s` (within `tol`) are grouped: every rank holds the same score, the documents
    above the boundary group are the same set, and `b`'s boundary documents belong to that group."""
    sa, sb = s[a], s[b]
    if len(a) != len(b) or not np.allclose(sa, sb, rtol=0, atol=tol): return False
    cut = sa[-1]  # score of the group at rank k, which may continue past rank k
    return set(a[sa > cut + tol].tolist()) == set(b[sb > cut + tol].tolist())


def timed(fn, repeat: int) -> float:
    "Median wall time of `repeat` calls of `fn` (after one warm-up call)."
    fn(); times = []
    for _ in range(repeat):
        t = time.perf_counter(); fn(); times.append(time.perf_counter() - t)
    return statistics.median(times)


def main(n_queries: int = 400, repeat: int = 5) -> int:
    t0 = time.perf_counter()
    path = data_dir() / 'hotpotqa' / 'hotpot_dev_distractor_1267.json'
    qs = load(path)
    ids, texts = Corpus.from_questions(qs).docs('sentence')
    doc_tokens = [tokenize(t) for t in texts]  # tokenized once: both systems see identical tokens
    queries = [tokenize(q.question) for q in qs[:n_queries]]
    print(f'{path.name}: {len(qs)} questions, {len(ids)} sentences; {len(queries)} benchmark queries '
          f'({time.perf_counter() - t0:.1f}s to load and tokenize)')

    t = time.perf_counter(); index = KeywordIndex(ids, tokens=doc_tokens, k1=1.5, b=0.75); t_rag_build = time.perf_counter() - t
    t = time.perf_counter(); ref = BM25Okapi(doc_tokens, k1=1.5, b=0.75, epsilon=0.0); t_ref_build = time.perf_counter() - t

    # rag_lib: all queries in one batched call, and one query at a time
    t_batch = timed(lambda: index.search_tokens(queries, k=K), repeat)
    t_loop = timed(lambda: [index.search_tokens([q], k=K) for q in queries], max(1, repeat // 2))
    rag_qps, rag_loop_qps = len(queries) / t_batch, len(queries) / t_loop

    # rank_bm25: one query at a time (slow); the agreement check runs outside the timed calls
    max_abs, max_rel, identical, t_ref, mismatches = 0.0, 0.0, 0, 0.0, []
    it = tqdm(queries, desc='rank_bm25', unit='q', file=sys.stderr) if tqdm else queries
    for i, q in enumerate(it):
        t = time.perf_counter(); r = ref.get_scores(q); t_ref += time.perf_counter() - t
        s = np.asarray(index.scores(q))
        d = np.abs(s.astype(np.float64) - r)
        max_abs, max_rel = max(max_abs, float(d.max())), max(max_rel, float((d / np.maximum(np.abs(r), 1e-12)).max()))
        if same_up_to_ties(s.astype(np.float64), top_k(s), top_k(r)): identical += 1
        else: mismatches.append(i)
    rank_qps = len(queries) / t_ref
    speedup, frac = rag_qps / rank_qps, identical / len(queries)

    print(f'index build: rag_lib {t_rag_build:.2f}s, rank_bm25 {t_ref_build:.2f}s')
    print(f'rag_lib batched {rag_qps:,.0f} q/s (median of {repeat}), per-query loop {rag_loop_qps:,.0f} q/s; '
          f'rank_bm25 {rank_qps:,.1f} q/s -> speedup {speedup:,.0f}x (loop: {rag_loop_qps / rank_qps:,.0f}x)')
    print(f'scores: rag_lib dtype {s.dtype}, max |diff| {max_abs:.3g}, max relative diff {max_rel:.3g}; '
          f'top-{K} identical up to ties for {identical}/{len(queries)} queries'
          + (f' (differ: {mismatches[:10]})' if mismatches else ''))

    failed = [msg for ok, msg in [
        (speedup >= TARGETS['speedup'], f'speedup={speedup:.1f} (target >= {TARGETS["speedup"]:g})'),
        (max_abs <= TARGETS['max_abs_diff'], f'max_abs_diff={max_abs:.3g} (target <= {TARGETS["max_abs_diff"]:g})'),
        (frac >= TARGETS['top10_identical'], f'top10_identical={frac:.3f} (target {TARGETS["top10_identical"]:g})')]
        if not ok]
    for f in failed: print(f'FAILED target: {f}')
    if max_abs > TOL and s.dtype == np.float32:
        print('note: rag_lib scores are float32 (bm25s default dtype); rank_bm25 computes in float64')
    print(f'total {time.perf_counter() - t0:.1f}s')
    print(' '.join([f'docs={len(ids)}', f'queries={len(queries)}', f'rag_qps={rag_qps:.1f}',
                    f'rag_loop_qps={rag_loop_qps:.1f}', f'rank_bm25_qps={rank_qps:.2f}', f'speedup={speedup:.1f}',
                    f'loop_speedup={rag_loop_qps / rank_qps:.1f}', f'max_abs_diff={max_abs:.3g}',
                    f'max_rel_diff={max_rel:.3g}', f'top10_identical={frac:.3f}', f'score_dtype={s.dtype}',
                    f'passed={int(not failed)}']))
    return 1 if failed else 0


if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--queries', type=int, default=400, help='first N questions as queries')
    p.add_argument('--repeat', type=int, default=5, help='timed repetitions of the batched rag_lib call')
    a = p.parse_args()
    sys.exit(main(a.queries, a.repeat))

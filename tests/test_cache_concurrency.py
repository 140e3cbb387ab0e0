"""Cache entries built by several processes at once: every process succeeds, one complete copy stays, no temporary is left.

Each worker holds its finished build at a barrier before sealing it, so the builds are sure to
overlap (both processes find the entry missing and build it) instead of merely being started together.
"""
import json, multiprocessing as mp, os
from pathlib import Path

import pytest

from rag_lib import core
from rag_lib.core import COMPLETE, cached_dir, dir_problem

CTX = mp.get_context('spawn')   # fresh interpreters: no torch state shared through fork


def _hold_before_sealing(barrier):
    "Make `core.seal_dir` wait until every worker has built its private copy."
    seal = core.seal_dir
    def held(path):
        barrier.wait(timeout=300)
        return seal(path)
    core.seal_dir = held


def _entry_worker(path, barrier, out):
    _hold_before_sealing(barrier)
    def build(tmp):
        (tmp / 'payload.bin').write_bytes(os.urandom(1 << 20))    # each copy differs: tells whose copy stayed
        (tmp / 'who').write_text(str(os.getpid()))
    out.put((os.getpid(), cached_dir(path, build, lambda p: (p / 'who').read_text())))


def _run(target, args_of, n=2, timeout=600):
    "Run `n` workers `target(*args_of(barrier, queue))`; return their results, failing on any error."
    barrier, out = CTX.Barrier(n), CTX.Queue()
    ps = [CTX.Process(target=target, args=args_of(barrier, out)) for _ in range(n)]
    for p in ps: p.start()
    results = [out.get(timeout=timeout) for _ in ps]
    for p in ps: p.join(timeout=60)
    assert [p.exitcode for p in ps] == [0] * n
    return results


def test_cached_dir_two_processes(tmp_path):
    path = tmp_path / 'entry'
    results = _run(_entry_worker, lambda b, q: (path, b, q))
    pids, seen = zip(*results)
    assert seen[0] == seen[1] and seen[0] in {str(p) for p in pids}      # both read the one copy that stayed
    assert dir_problem(path) is None and [p.name for p in tmp_path.iterdir()] == ['entry']


def _index_worker(cache, barrier, out):
    os.environ['RAG_LIB_CACHE'] = str(cache)
    import hashlib
    import numpy as np
    from rag_lib.corpus import Corpus
    from rag_lib.data import Paragraph
    from rag_lib.retrieval import Embedder, Retrieval

    class HashEmbedder(Embedder):   # deterministic vectors without loading a model (keeps the test fast)
        def __init__(self): self.name = self.fingerprint = 'hash-8'; self.batch_size = 32
        def encode_docs(self, texts, progress=False):
            v = np.array([list(hashlib.sha256(t.encode()).digest()[:8]) for t in texts], np.float32) + 1
            return v / np.linalg.norm(v, axis=1, keepdims=True)
        encode_queries = encode_docs

    corpus = Corpus([Paragraph(f'Town {i}', [f'Town {i} lies on river {i % 4}.', f'Its mayor is Ann {i}.']) for i in range(30)], 'toy')
    r = Retrieval(corpus, embed_model=HashEmbedder())
    _hold_before_sealing(barrier)                         # both build the same two indexes, then publish
    q = ['Who is the mayor of Town 7?']
    kw, dense = r.keyword('sentence').search(q, k=3), r.semantic('sentence')
    out.put(([h.doc_id for h in kw[0]], dense.embeddings.tobytes().hex(), [h.doc_id for h in dense.search(q, k=3)[0]]))


def test_index_cache_two_processes(tmp_path):
    results = _run(_index_worker, lambda b, q: (tmp_path, b, q))
    assert results[0] == results[1] and len(results[0][0]) == 2   # the two sentences of Town 7
    entries = sorted((tmp_path / 'index').iterdir())
    assert len(entries) == 2 and all(not e.name.startswith('.') and dir_problem(e) is None for e in entries)
    assert sorted('embeddings.npy' in json.loads((e / COMPLETE).read_text())['files'] for e in entries) == [False, True]   # BM25 and dense


def _model_worker(cache, barrier, out):
    os.environ['RAG_LIB_CACHE'] = str(cache)
    from rag_lib.llm import resolve_llm
    barrier.wait(timeout=300)
    path = resolve_llm('smollm2')
    from safetensors import safe_open
    with safe_open(str(Path(path) / 'model.safetensors'), 'pt') as f: n = len(list(f.keys()))
    out.put((path, n))


@pytest.mark.skipif(not os.environ.get('RAG_LIB_SLOW'), reason='converts the real SmolLM2 GGUF in two processes at once '
                    '(about a minute on two cores, 1 GB of disk); set RAG_LIB_SLOW=1 to run it')
def test_model_conversion_two_processes(tmp_path):
    (path, n), other = _run(_model_worker, lambda b, q: (tmp_path, b, q), timeout=900)
    assert other == (path, n) and n > 0 and dir_problem(Path(path), hashes=True) is None
    assert [p.name for p in (tmp_path / 'models').iterdir()] == [Path(path).name]     # no temporary left

"""Benchmark: entity linking of whole corpora, batched and cached, against one spaCy call per text.

For each corpus (the generated world's 192 paragraphs; the HotpotQA sample's paragraphs when
the file is on disk) it links every paragraph with `EntityLinker` three ways, in one process:

- reference: `nlp(text)` once per paragraph (a plain loop), on the first `--reference` texts;
- rag_lib, fresh: `EntityLinker(corpus, cache=<new file>).link_corpus()`, one `nlp.pipe` pass;
- rag_lib, cached: a second linker on the same span file (no NER runs, only the dictionary).

It prints seconds and paragraphs per second of each, the speedup of `nlp.pipe` over the
per-text loop on the same texts (a ratio within one process, so it does not depend on the
machine's absolute speed or load), and checks that the per-text loop gives the same spans.
Target: the same spans both ways, on every corpus (the exit code is 0 only then).
Run: `python benchmarks/entities.py [--hotpot-questions 100] [--reference 200]`
(`--hotpot-questions 0`: the whole 1,267-question file).
"""
import argparse, sys, tempfile, time
from pathlib import Path

from rag_lib.core import data_dir
from rag_lib.corpus import REAL_FILES, Corpus
from rag_lib.data import load, sample_uniform
from rag_lib.entities import EntityLinker, load_spacy
from rag_lib.world import load_world


def bench(name: str, corpus: Corpus, n_ref: int) -> dict:
    "Seconds to link `corpus` fresh and from the span cache, and the per-text reference on `n_ref` texts."
    path = Path(tempfile.mkdtemp()) / 'spans.jsonl'
    t0 = time.perf_counter(); lk = EntityLinker(corpus, cache=path); ents = lk.link_corpus(); fresh = time.perf_counter() - t0
    t0 = time.perf_counter(); again = EntityLinker(corpus, cache=path).link_corpus(); cached = time.perf_counter() - t0
    assert again == ents
    texts = [p.text for p in corpus.paragraphs[:n_ref]]
    t0 = time.perf_counter(); loop = [[(e.text, e.label_, e.start_char, e.end_char) for e in lk.nlp(x).ents] for x in texts]; ref = time.perf_counter() - t0
    t0 = time.perf_counter(); piped = EntityLinker(corpus, cache=False).ner(texts); pipe = time.perf_counter() - t0
    n, k = len(corpus), sum(map(len, ents.values()))
    print(f'{name}: {n} paragraphs, {k} entities ({k / n:.1f} per paragraph); fresh {fresh:.1f}s ({n / fresh:.0f}/s), '
          f'cached {cached:.2f}s ({n / cached:.0f}/s); on {len(texts)} texts: per-text loop {ref:.1f}s, nlp.pipe {pipe:.1f}s, '
          f'same spans: {loop == piped}')
    return {f'{name}_paragraphs': n, f'{name}_fresh_s': round(fresh, 2), f'{name}_cached_s': round(cached, 2),
            f'{name}_pipe_speedup': round(ref / pipe, 2), f'{name}_same_spans': loop == piped}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--hotpot-questions', type=int, default=100, help='HotpotQA questions whose paragraphs form the corpus (0: all)')
    ap.add_argument('--reference', type=int, default=200, help='texts timed with the per-text loop')
    a = ap.parse_args()
    t0 = time.perf_counter(); load_spacy(); print(f'spaCy pipeline loaded in {time.perf_counter() - t0:.1f}s')
    out = bench('world', Corpus.from_questions(load_world(), 'world'), a.reference)
    path = data_dir() / REAL_FILES['hotpotqa']
    if path.exists():
        qs = load(path, dataset='hotpotqa')
        if a.hotpot_questions: qs = sample_uniform(qs, n=a.hotpot_questions, seed=42)
        out |= bench('hotpot', Corpus.from_questions(qs, 'hotpotqa'), a.reference)
    else: print(f'{path} not found: HotpotQA skipped')
    print(' '.join(f'{k}={v}' for k, v in out.items()))
    ok = all(v for k, v in out.items() if k.endswith('_same_spans'))
    if not ok: print('target missed: the same spans from nlp.pipe as from the per-text loop', file=sys.stderr)
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())

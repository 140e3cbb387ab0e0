"""Ranking that is the same on machines with different CPU kernels (issue 19, item 8 of its defects, item 7 to build):
numpy picks its SIMD selection and sort kernels per CPU, and `NPY_DISABLE_CPU_FEATURES` makes this machine pick others
(the AVX2 ones off), as an older CPU would. The BM25 rankings of the default chain's world sample (and of a corpus built
to tie) must not change; with `argpartition` they did."""
import json, os, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = r'''
import json, sys
from rag_lib.components import Study
from rag_lib.retrieval import KeywordIndex
study = Study({'datasets': ['world']})
b, = study.benchmarks
out = {}
for g in ('sentence', 'paragraph'):
    ki = study.retrieval(b).keyword(g)
    for k in (10, 50):
        out[f'{g}@{k}'] = [[h.doc_id for h in hs] for hs in ki.search([q.question for q in b.questions], k=k)]
tied = KeywordIndex([f'y{j}' for j in range(3000)], ['red fox' if j % 7 == 0 else f'other {j}' for j in range(3000)])
out['tied'] = [h.doc_id for h in tied.search(['red fox'], k=50)[0]]
print(json.dumps(out))
'''
OTHER_KERNELS = 'AVX2 FMA3 F16C AVX AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL AVX512_SPR X86_V3 X86_V4'


def _rankings(tmp_path: Path, **env) -> dict:
    e = {**os.environ, 'RAG_LIB_CACHE': str(tmp_path / 'cache'), 'RAG_LIB_ARTIFACTS': str(tmp_path / 'artifacts'),
         'PYTHONPATH': os.pathsep.join([str(ROOT), os.environ.get('PYTHONPATH', '')]), **env}
    r = subprocess.run([sys.executable, '-c', SCRIPT], capture_output=True, text=True, env=e, cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_bm25_rankings_do_not_depend_on_the_cpu_kernels(tmp_path):
    here = _rankings(tmp_path)
    other = _rankings(tmp_path, NPY_DISABLE_CPU_FEATURES=OTHER_KERNELS)
    assert here['tied'] == [f'y{j}' for j in range(0, 350, 7)]     # equal scores: document order
    assert other == here

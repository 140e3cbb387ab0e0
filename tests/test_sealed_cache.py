"""Damaged cache logs never change results: bytes XOR-ed, an answer edited inside a valid line, a broken JSON line in the
trajectory, CTE-row and SRU logs are each named (path, line) and recomputed, and the rerun gives the same table."""
import json, os, subprocess, sys
from pathlib import Path

SCRIPT = r'''
import json, sys, warnings
from pathlib import Path
from rag_lib.agents import run_cached
from rag_lib.baselines import RulePolicy
from rag_lib.core import to_jsonable
from rag_lib.corpus import Corpus
from rag_lib.intervention import run_cte
from rag_lib.retrieval import Retrieval
from rag_lib.utility import RuleReader, sru_scores
from rag_lib.world import load_world

out = Path(sys.argv[1])
world = load_world(n=300)
retrieval = Retrieval(Corpus.from_questions(world, 'world'))
agent = RulePolicy(retrieval, k=10)
questions = [q for q in world if q.type == 'bridge'][:6]
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter('always')
    bases = run_cached(agent, None, questions, progress=False)
    rows = run_cte(agent, None, bases, questions, retrieval.corpus, progress=False)
    sru = sru_scores([(q, r.doc_id) for q in questions for r in rows if r.qid == q.id], RuleReader(agent),
                     retrieval.corpus)
table = {'answers': [[t.qid, t.answer] for t in bases], 'rows': [to_jsonable(r) for r in rows],
         'sru': sorted([list(k) + [v] for k, v in sru.items()])}
(out / 'table.json').write_text(json.dumps(table, sort_keys=True))
(out / 'warnings.txt').write_text('\n'.join(str(w.message) for w in caught))
'''


def _run(out: Path, cache: Path) -> subprocess.CompletedProcess:
    out.mkdir(parents=True, exist_ok=True)
    return subprocess.run([sys.executable, '-c', SCRIPT, str(out)], env={**os.environ, 'RAG_LIB_CACHE': str(cache)},
                          capture_output=True, text=True, timeout=600)


def test_damaged_cache_logs_are_named_and_recomputed(tmp_path):
    cache = tmp_path / 'cache'
    ref = _run(tmp_path / 'ref', cache)
    assert ref.returncode == 0, ref.stderr[-2000:]
    table = json.loads((tmp_path / 'ref' / 'table.json').read_text())
    assert table['answers'] and table['rows'] and table['sru']
    trajs, = (cache / 'trajectories').glob('*.jsonl')
    branches, = (cache / 'cte').glob('*.branches.jsonl')
    cte_rows, = (cache / 'cte').glob('*.rows.jsonl')
    sru_log, = (cache / 'sru').glob('*.jsonl')
    # an answer edited inside a valid JSON line (what made bridge_summary's EM 1.000 -> 0.889 with exit 0 before)
    qid, answer = table['answers'][0]
    text = trajs.read_text()
    assert f'"answer":{json.dumps(answer)}' in text
    trajs.write_text(text.replace(f'"answer":{json.dumps(answer)}', '"answer":"edited"', 1))
    # four bytes XOR-ed inside a CTE branch (no longer UTF-8: a bare UnicodeDecodeError before)
    b = bytearray(branches.read_bytes())
    for i in range(200, 204): b[i] ^= 0xFF
    branches.write_bytes(bytes(b))
    # a broken JSON line in the CTE rows (failed every rerun the same way before), and an edited SRU answer
    lines = cte_rows.read_text().splitlines(keepends=True)
    lines[1] = lines[1].replace('{', '', 1)
    cte_rows.write_text(''.join(lines))
    sru_text = sru_log.read_text()
    sru_log.write_text(sru_text.replace('"answer":"', '"answer":"x', 1))
    again = _run(tmp_path / 'again', cache)
    assert again.returncode == 0, again.stderr[-2000:]
    assert json.loads((tmp_path / 'again' / 'table.json').read_text()) == table     # the same results
    warned = (tmp_path / 'again' / 'warnings.txt').read_text()
    for log in (trajs, branches, cte_rows, sru_log):
        assert f'{log}: 1 damaged line(s)' in warned, (log, warned)
    assert f'{cte_rows}: 1 damaged line(s) of {len(lines)} (line 2: its bytes do not match its SHA-256)' in warned
    # repaired: a third run reads clean logs, with no warning
    third = _run(tmp_path / 'third', cache)
    assert third.returncode == 0 and json.loads((tmp_path / 'third' / 'table.json').read_text()) == table
    assert 'damaged' not in (tmp_path / 'third' / 'warnings.txt').read_text()

"""A counterfactual replay killed mid-run (SIGKILL) resumes without redoing finished branches and ends with the same table."""
import json, os, signal, subprocess, sys, time
from pathlib import Path

SCRIPT = r'''
import json, sys, time
from pathlib import Path
from rag_lib.agents import Runner
from rag_lib.baselines import RulePolicy
from rag_lib.core import to_jsonable
from rag_lib.corpus import Corpus
from rag_lib.intervention import run_cte
from rag_lib.retrieval import Retrieval
from rag_lib.world import load_world

out, pause = Path(sys.argv[1]), float(sys.argv[2])
world = load_world(n=300)
retrieval = Retrieval(Corpus.from_questions(world, 'world'))
replayed = set()

class Paced(RulePolicy):
    "The rule policy, pausing at every replayed move (so that a kill lands mid-run) and noting which branches moved."
    def next(self, t):
        if t.parent:
            replayed.add(t.key); time.sleep(pause)
        return super().next(t)

agent = Paced(retrieval, k=10)
questions = [q for q in world if q.type == 'bridge'][:10]
bases = Runner(agent, progress=False).run(questions)
rows = run_cte(agent, None, bases, questions, retrieval.corpus, logs=(out / 'branches.jsonl', out / 'rows.jsonl'), progress=False)
(out / 'table.json').write_text(json.dumps([to_jsonable(r) for r in rows], sort_keys=True))
(out / 'replayed.json').write_text(json.dumps(sorted(replayed)))
'''


def _run(out: Path, pause: float) -> subprocess.Popen:
    out.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen([sys.executable, '-c', SCRIPT, str(out), str(pause)], env={**os.environ, 'RAG_LIB_CACHE': str(out / 'cache')})


def _lines(p: Path) -> int:
    return p.read_text().count('\n') if p.exists() else 0


def test_killed_cte_resumes_with_the_same_table(tmp_path):
    ref = _run(tmp_path / 'ref', 0.0)
    assert ref.wait(timeout=300) == 0
    table = json.loads((tmp_path / 'ref' / 'table.json').read_text())
    assert len(table) > 50

    killed, log = _run(tmp_path / 'k', 0.02), tmp_path / 'k' / 'branches.jsonl'
    deadline = time.time() + 240
    while _lines(log) < 20 and killed.poll() is None and time.time() < deadline: time.sleep(0.05)
    killed.send_signal(signal.SIGKILL); killed.wait()
    finished = _lines(log)
    assert 0 < finished < len(table), f'the kill should land mid-run ({finished} of {len(table)} branches logged)'

    again = _run(tmp_path / 'k', 0.0)
    assert again.wait(timeout=300) == 0
    replayed = json.loads((tmp_path / 'k' / 'replayed.json').read_text())
    assert len(replayed) == len(table) - finished   # exactly the branches the log did not hold
    assert json.loads((tmp_path / 'k' / 'table.json').read_text()) == table

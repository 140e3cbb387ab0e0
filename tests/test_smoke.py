"""The `smoke` profile end to end (issue 17): the default chain's trained agents (GRASP and Search-R1 style, the
ReAct policy, the reader) through every experiment notebook, a few questions each, from a clean cache. What `make
reproduce` does on the `cpu` profile at its full sizes, in minutes: every notebook runs, every claim the chain
registers gets a row with its interval and verdict, and the claims figures exist."""
import re
from pathlib import Path

from rag_lib.core import get_profile
from rag_lib.pipeline import CLAIMS, experiment_notebooks

from conftest import cli

ROOT = Path(__file__).resolve().parents[1]


def test_smoke_profile_end_to_end(isolated):
    # the timeout guards against a hang, it is no speed target (those live in benchmarks/): on an AVX2-only 2-core
    # EPYC (float32) the chain ran past 1,500 s twice while other jobs shared the cores
    rc, out, err = cli('reproduce', '--profile', 'smoke', timeout=3600)
    assert rc == 0, out[-3000:] + err[-3000:]
    run = isolated / 'artifacts' / 'runs' / get_profile('smoke').run_id
    assert sorted(p.stem for p in run.glob('*.ipynb')) == [p.stem for p in experiment_notebooks(ROOT)]
    claims = (run / 'CLAIMS.md').read_text()
    assert '| claim | paper | this run [95% CI] | n | verdict |' in claims
    assert [c.id for c in CLAIMS if c.text not in claims] == []
    assert re.search(r'\*\*\d+ decided\*\*', claims)
    for paper in ('bridge', 'grasp'):
        assert (run / 'figures' / f'claims_{paper}.png').stat().st_size > 0
        assert f'(figures/claims_{paper}.png)' in claims
    # the bridge study ran the trained ReAct policy beside the rule policy, labelled as the ground-truth agent
    quad = (run / 'tables' / 'bridge_quadrant.csv').read_text()
    assert 'trained ReAct policy' in quad and 'ground-truth agent (rule policy)' in quad

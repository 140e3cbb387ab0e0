"""`make docs`: the site builds offline and every notebook (index, library, experiments) has its page."""
from pathlib import Path

import pytest

from rag_lib import pipeline

ROOT = Path(__file__).resolve().parents[1]


def test_site_has_a_page_per_notebook(tmp_path, monkeypatch):
    pytest.importorskip('mkdocs_jupyter', reason='the docs need the dev extra (mkdocs-material, mkdocs-jupyter)')
    monkeypatch.chdir(ROOT)
    site = pipeline.build_docs(ROOT, site=tmp_path / 'site', work=tmp_path / 'work')
    assert 'rag_lib' in (site / 'index.html').read_text() and 'How to start' in (site / 'index.html').read_text()
    library = sorted((ROOT / 'nbs').glob('[0-9][0-9]*.ipynb'))
    experiments = pipeline.experiment_notebooks(ROOT)
    assert library and experiments
    for nb in library: assert (site / 'library' / nb.stem / 'index.html').is_file(), nb.name
    for nb in experiments: assert (site / 'experiments' / nb.stem / 'index.html').is_file(), nb.name
    for page in ('results', 'claims'): assert (site / page / 'index.html').is_file(), page
    promoted = pipeline.artifacts_root() / 'notebooks'
    if promoted.is_dir():   # the experiment pages show the last promoted run, with its outputs
        nav = pipeline.docs_sources(ROOT, tmp_path / 'nav')
        for label, path in (kv for d in nav if 'Experiments' in d for e in d['Experiments'] for kv in e.items()):
            assert ('(not run yet)' in label) == (not (promoted / Path(path).name).exists()), label
    for fig in sorted((pipeline.artifacts_root() / 'figures').glob('*.png')):
        assert (site / 'figures' / fig.name).is_file()
    assert (site / 'extra' / 'mathjax' / 'MathJax.js').is_file()   # math is typeset offline, from the site itself
    page = (site / 'library' / '10_utility' / 'index.html').read_text()
    assert 'extra/mathjax/MathJax.js' in page   # and the pages load it (scripts/check_docs.py checks the typesetting)

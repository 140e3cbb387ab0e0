"""Fixtures shared by the test files."""
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    "A fresh artifacts folder and a clean cache under `tmp_path`; the checkout under test first on the path."
    monkeypatch.setenv('RAG_LIB_ARTIFACTS', str(tmp_path / 'artifacts'))
    monkeypatch.setenv('RAG_LIB_CACHE', str(tmp_path / 'cache'))
    monkeypatch.setenv('PYTHONPATH', os.pathsep.join([str(ROOT), os.environ.get('PYTHONPATH', '')]))
    return tmp_path

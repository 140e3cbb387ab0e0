"""Fixtures shared by the test files."""
import os, subprocess, sys
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


@pytest.fixture
def env(isolated, monkeypatch):
    "`isolated`, run from the checkout."
    monkeypatch.chdir(ROOT)
    return isolated


MAIN = 'import sys; from rag_lib.pipeline import main; sys.exit(main(sys.argv[1:]))'   # `rag-lib`, from here


def cli(*argv, env_extra=None, timeout=None):
    "`rag-lib ARGV` as a subprocess from the checkout (`timeout`: seconds, a hang guard): (status, stdout, stderr)."
    e = {**os.environ, **(env_extra or {})}
    r = subprocess.run([sys.executable, '-c', MAIN, *argv], capture_output=True, text=True, env=e, cwd=ROOT,
                       timeout=timeout)
    return r.returncode, r.stdout, r.stderr

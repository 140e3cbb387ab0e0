"""rag_lib/ must be exactly what the notebooks export: nbdev_export in a copy changes nothing."""
import filecmp, shutil, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_export_is_up_to_date(tmp_path):
    for name in ('settings.ini', 'setup.py', 'pyproject.toml'):
        if (ROOT / name).exists(): shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / 'nbs', tmp_path / 'nbs')
    shutil.copytree(ROOT / 'rag_lib', tmp_path / 'rag_lib', ignore=shutil.ignore_patterns('__pycache__'))
    exporter = Path(sys.executable).with_name('nbdev_export')
    subprocess.run([str(exporter)], cwd=tmp_path, check=True, capture_output=True)
    diff, left, right = [], [], []
    def walk(cmp, where=''):   # subpackages included (rag_lib/pipeline/, rag_lib/core/, ...)
        diff.extend(where + f for f in cmp.diff_files); left.extend(where + f for f in cmp.left_only)
        right.extend(where + f for f in cmp.right_only)
        for name, sub in cmp.subdirs.items(): walk(sub, f'{where}{name}/')
    walk(filecmp.dircmp(ROOT / 'rag_lib', tmp_path / 'rag_lib', ignore=['__pycache__']))
    assert not (diff or left or right), (
        f'nbdev_export changes rag_lib/: modified {diff}, only in repo {left}, '
        f'only in export {right}; edit the notebooks, run nbdev_export and commit both')

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
    cmp = filecmp.dircmp(ROOT / 'rag_lib', tmp_path / 'rag_lib', ignore=['__pycache__'])
    assert not (cmp.diff_files or cmp.left_only or cmp.right_only), (
        f'nbdev_export changes rag_lib/: modified {cmp.diff_files}, only in repo {cmp.left_only}, '
        f'only in export {cmp.right_only}; edit the notebooks, run nbdev_export and commit both')

"""The GPU install resolves: pip finds rag_lib's requirements with `verl[vllm]==0.9.1` inside constraints-gpu.txt
(against the package registry; skipped without network), and the file pins what verl's `vllm` extra pins."""
import configparser, json, socket, subprocess, sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GPU = ROOT / 'constraints-gpu.txt'
VLLM_EXTRA = {'vllm': '0.24.0', 'torch': '2.11.0', 'torchvision': '0.26.0', 'torchaudio': '2.11.0',
              'transformers': '5.9.0', 'verl': '0.9.1'}   # verl 0.9.1's METADATA, extra == "vllm"


def pins(path: Path) -> dict:
    return {l.split('==')[0].lower(): l.split('==')[1].strip() for l in path.read_text().splitlines()
            if '==' in l and not l.startswith('#')}


def requirements() -> list[str]:
    "What `pip install -e '.[gpu]'` asks for: settings.ini's requirements, train and gpu extras."
    cfg = configparser.ConfigParser(); cfg.read(ROOT / 'settings.ini')
    s = cfg['DEFAULT']
    return [r for k in ('requirements', 'train_requirements', 'gpu_requirements', 'hub_requirements')
            for r in s.get(k, '').split()]


def online(host='pypi.org', port=443) -> bool:
    try: socket.create_connection((host, port), timeout=3).close(); return True
    except OSError: return False


def test_gpu_constraints_pin_the_vllm_extra():
    p = pins(GPU)
    assert {k: p.get(k) for k in VLLM_EXTRA} == VLLM_EXTRA


def test_docs_use_the_gpu_constraints():
    for f in ('README.md', 'docs/scale.md', 'scripts/gpu_smoke.sh'):
        text = (ROOT / f).read_text()
        assert 'constraints-gpu.txt' in text, f
        assert '-c constraints.txt -e ".[gpu]"' not in text, f   # the CPU pins cannot resolve with verl[vllm]


@pytest.mark.skipif(not online(), reason='no network: the package registry cannot be asked')
def test_gpu_constraints_resolve(tmp_path):
    report = tmp_path / 'report.json'
    r = subprocess.run([sys.executable, '-m', 'pip', 'install', '--dry-run', '--ignore-installed', '--quiet',
                        '--report', str(report), '-c', str(GPU), *requirements()],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    got = {i['metadata']['name'].lower(): i['metadata']['version'] for i in json.loads(report.read_text())['install']}
    assert {k: got.get(k) for k in VLLM_EXTRA} == VLLM_EXTRA

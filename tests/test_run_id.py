"""The resolved profile, hence the run id, is a function of the profile, the CPU's flags and the installed packages:
no timing in it. A machine-wide record that an older rag_lib measured under load (bf16 0.002x float32 at one row,
124x at eight) sat in `~/.cache/rag_lib/compute/` and decided `compute_dtype: auto`; two fresh checkouts on one machine,
one with such a record and one without, must resolve the same run id, and a machine of the kind that made the committed
run (the CPU flags its manifest records) must resolve that run's id."""
import json, os, subprocess, sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = json.loads((ROOT / 'artifacts' / 'manifest.json').read_text())
LOADED = {'1': 0.002, '8': 123.64, '16': 0.009}   # what a probe wrote beside other jobs, on an avx512_bf16 EPYC

# print the cpu profile's run id, with this CPU's flags or, given FLAGS as JSON, those instead
SNIPPET = '''
import json, os, sys
import rag_lib.core.compute as c
if os.environ.get('FLAGS'):
    c.cpu_flags = lambda path='/proc/cpuinfo': frozenset(json.loads(os.environ['FLAGS']))
    c.cpu_model = lambda path='/proc/cpuinfo': os.environ['CPU']
from rag_lib.core import get_profile
print(get_profile('cpu').run_id)
'''


def run_id(home: Path, flags: list | None = None, cpu: str = '') -> str:
    "The cpu profile's run id in a fresh process whose home (machine-wide caches) is `home`."
    env = {k: v for k, v in os.environ.items() if k not in ('RAG_LIB_PROBES', 'FLAGS', 'CPU')}
    env.update(HOME=str(home), PYTHONPATH=str(ROOT), XDG_CACHE_HOME=str(home / '.cache'))
    if flags is not None: env.update(FLAGS=json.dumps(flags), CPU=cpu)
    r = subprocess.run([sys.executable, '-c', SNIPPET], capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def loaded_home(tmp_path: Path, cpu: str, support: str | None) -> Path:
    "A home folder holding a probe record written under load, under the name the probing code gave it."
    from rag_lib.core.files import stable_hash
    home = tmp_path / 'loaded'
    d = home / '.cache' / 'rag_lib' / 'compute'
    d.mkdir(parents=True)
    rec = {'cpu': cpu, 'bf16_support': support, 'torch': torch.__version__, 'speedups': LOADED}
    (d / f"probe-{stable_hash([cpu, support, torch.__version__], 12)}.json").write_text(json.dumps(rec, indent=1))
    return home


def test_a_loaded_probe_record_does_not_move_this_machines_run_id(tmp_path):
    from rag_lib.core import bf16_support, cpu_model
    clean = tmp_path / 'clean'; clean.mkdir()
    assert run_id(clean) == run_id(loaded_home(tmp_path, cpu_model(), bf16_support()))


@pytest.mark.skipif(MANIFEST['compute']['kernels']['torch'] != torch.__version__,
                    reason='the committed run was made with another torch')
def test_the_committed_runs_kind_of_machine_resolves_its_run_id(tmp_path):
    kern = MANIFEST['compute']['kernels']
    clean = tmp_path / 'clean'; clean.mkdir()
    loaded = loaded_home(tmp_path, kern['cpu'], MANIFEST['compute']['bf16_support'])
    assert run_id(clean, kern['flags'], kern['cpu']) == MANIFEST['run_id']
    assert run_id(loaded, kern['flags'], kern['cpu']) == MANIFEST['run_id']

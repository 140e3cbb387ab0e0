"""The stage clock of the reference scripts (`grasp_reference.py`, `reader_reference.py`, `agent_reference.py`): each
stage's wall time per session, with the machine's load averages at its start and end, kept in
`<runs>/stage_times.json`; and the manifest those scripts write into their records."""
import json, os, time
from pathlib import Path

from rag_lib.core import atomic_write_text


def load_averages() -> str:
    "The 1, 5 and 15 minute load averages, as text."
    return ' '.join(f'{x:.2f}' for x in os.getloadavg())


def read_times(runs: Path) -> dict:
    "The stage times recorded so far in `runs` (empty at first)."
    f = Path(runs) / 'stage_times.json'
    return json.loads(f.read_text()) if f.exists() else {}


def timed_stage(runs: Path, times: dict, stage: str, work) -> None:
    """Run `work()` as `stage`, add this session's time to `times` and write them to `runs/stage_times.json`. The
    other stages' times are read again first (and merged into `times`), so two processes sharing `runs` (one training,
    one evaluating) keep each other's times."""
    t0, load0 = time.time(), load_averages()
    print(f'== {stage} (load {load0})', flush=True)
    work()
    times.update({k: v for k, v in read_times(runs).items() if k != stage})
    rec = times.get(stage, {'seconds': 0.0, 'sessions': []})
    rec['sessions'].append({'seconds': round(time.time() - t0, 1), 'load_start': load0, 'load_end': load_averages(),
                            'started': time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(t0))})
    rec['seconds'] = round(sum(s['seconds'] for s in rec['sessions']), 1)
    times[stage] = rec
    atomic_write_text(Path(runs) / 'stage_times.json', json.dumps(times, indent=1))


def write_manifest(record: Path, times: dict, **fields) -> None:
    """`record/manifest.json`: `fields` (command, configs, data, ...), then the stage times, the CPU count, the package
    versions and the SHA-256 of every file of the record."""
    from rag_lib.core import file_sha256, to_jsonable
    from rag_lib.pipeline import PACKAGES, package_versions
    files = sorted(p for p in Path(record).rglob('*') if p.is_file() and p.name != 'manifest.json')
    manifest = {**fields, 'stage_times': times, 'cpu_count': os.cpu_count(),
                'packages': package_versions(PACKAGES + ('peft',)),
                'files': {str(p.relative_to(record)): file_sha256(p) for p in files}}
    atomic_write_text(Path(record) / 'manifest.json', json.dumps(to_jsonable(manifest), indent=1))

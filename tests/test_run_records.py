"""The run folder's records and the checks before work, tried the way a user meets them: a state file of another
shape, a write log or state naming a path outside the run folder, a promotion stopped midway (what `status` says), an
environment variable or a device the notebooks would fail on late, a read-only cache folder and a full disk. Each
takes seconds: no notebook runs (the chain stops before one, or every notebook has finished already)."""
import errno, functools, json, tempfile
from pathlib import Path

import pytest

from rag_lib import core, pipeline
from rag_lib.pipeline import chain

ROOT = Path(__file__).resolve().parents[1]
TINY = ['datasets=world', 'n_questions=6', 'agent_questions=1', 'agents=rule', 'bridge_agents=rule',
        'bridge_questions=12', 'grasp_questions=1', 'train_steps=0', 'llm_backend=scripted', 'rerank_agents=rule',
        'rerank_datasets=world', 'rerank_questions=4', 'rerank_llm_questions=1', 'rerank_seeds=1']
PROFILE = core.resolve_profile('cpu', dict(s.split('=', 1) for s in TINY))


import conftest  # noqa: E402 (the `env` fixture comes from conftest too)
cli = functools.partial(conftest.cli, timeout=300)   # a tiny chain: minutes at most


def finished(tmp: Path) -> Path:
    "The tiny profile's run folder with every notebook of the chain finished (no outputs), as a run leaves it."
    nbs = chain.experiment_notebooks(ROOT)
    inputs = chain.notebook_inputs(nbs, PROFILE, chain.input_digests(PROFILE))
    run = tmp / 'artifacts' / 'runs' / PROFILE.run_id
    (run / '.state').mkdir(parents=True)
    for nb in nbs:
        (run / f'{nb.stem}.ipynb').write_text('{}')
        (run / '.state' / f'{nb.stem}.json').write_text(json.dumps(
            {'key': inputs[nb.stem]['key'], 'inputs': {}, 'outputs': {}, 'seconds': 1.0}))
    return run


def test_state_file_of_another_shape_is_a_notebook_to_run_again(env):
    "`[]` in a state file gave AttributeError ('list' object has no attribute 'get'); now: stale, saying why."
    run = finished(env)
    (run / '.state' / '03_agents.json').write_text('[]')
    rc, out, err = cli('status', '--set', *TINY)
    assert rc == 0 and 'Traceback' not in err, err
    why = f"its state file {run / '.state' / '03_agents.json'} is damaged (it holds a JSON list, not a state record)"
    assert f'03_agents                stale    {why}' in out
    assert '02_retrieval             cached' in out and '04_bridge                cached' in out


@pytest.mark.parametrize('record', ['.writes/09_claims.jsonl', '.state/09_claims.json'])
def test_path_outside_the_run_folder_is_refused_and_nothing_deleted(env, record):
    "A write log or state naming `../../../victim.txt` made the next `--only 09_` delete that file."
    run = finished(env)
    (victim := env / 'victim.txt').write_text('not the run folder\'s')
    (run / '.state' / '09_claims.json').unlink()   # 09_claims did not finish: the next run clears what it wrote
    rel = '../../../victim.txt'
    f = run / record; f.parent.mkdir(exist_ok=True)
    f.write_text(json.dumps({'path': rel}) + '\n' if record.endswith('.jsonl') else
                 json.dumps({'key': 'k', 'inputs': {}, 'outputs': {rel: 'x'}, 'seconds': 1.0}))
    rc, out, err = cli('reproduce', '--only', '09_', '--set', *TINY)
    again = ' (its notebook then runs again)' if record.startswith('.state') else ''
    assert rc == 2 and err == (f"rag-lib: {f} names the path '{rel}', outside {run}: refused, nothing was deleted; "
                               f'fix: remove {f}{again}\n'), err
    assert victim.read_text() == "not the run folder's" and f.exists()


def test_status_names_a_promotion_stopped_midway(env):
    "A promotion killed between its renames leaves a journal: `status` says so, and what the next run does."
    art = env / 'artifacts'; (art / '.promote').mkdir(parents=True)
    (art / '.promote' / 'journal.json').write_text(json.dumps(
        {'stage': 'stage-1', 'old': 'old-1', 'paths': list(chain.PROMOTED), 'done': False, 'existed': ['tables']}))
    rc, out, err = cli('status', '--set', *TINY)
    assert rc == 0, err
    assert (f"  promotion: the last promotion into {art}/ was stopped midway ({art / '.promote' / 'journal.json'}): "
            f'{art}/ may hold parts of two runs; the next `rag-lib reproduce` (any profile) first puts the run before '
            'it back, whole\n') in out


@pytest.mark.parametrize('argv, extra, says', [
    (['--set', 'encoder_device=banana'], {}, "rag-lib: encoder_device: 'banana' is not a torch device; fix: "),
    ([], {'RAG_LIB_THREADS': 'abc'}, "rag-lib: RAG_LIB_THREADS='abc': not a whole number >= 1; fix: "),
    (['--set', 'proxy_threshold=NaN'], {}, 'rag-lib: profile field proxy_threshold: nan is not allowed: not a finite'),
    (['--set', 'agent_datasets=world,world'], {}, "rag-lib: profile field agent_datasets: ('world', 'world') is not "
                                                  "allowed: 'world' is listed twice"),
])
def test_what_would_fail_late_stops_the_dry_run(env, argv, extra, says):
    "A device string, an environment variable, NaN and a list naming an item twice passed `--dry-run` (exit 0)."
    rc, out, err = cli('reproduce', '--dry-run', '--set', *TINY, *argv, env_extra=extra)
    assert rc == 2 and err.startswith(says) and err.count('\n') <= 2 and 'Traceback' not in err, err
    assert not (env / 'artifacts').exists()


def test_read_only_cache_folder_is_one_line_on_a_dry_run(env, monkeypatch, capsys):
    "`OSError: [Errno 30] ... digests` (a traceback) even on `--dry-run`; now one line naming the folder and the fix."
    cache = env / 'cache'; cache.mkdir()
    real = tempfile.mkstemp
    def read_only(*a, dir=None, **kw):   # as root chmod stops no write: the file system's refusal, simulated
        if dir is not None and Path(dir).resolve().is_relative_to(cache.resolve()):
            raise OSError(errno.EROFS, 'Read-only file system', str(dir))
        return real(*a, dir=dir, **kw)
    monkeypatch.setattr(tempfile, 'mkstemp', read_only)
    assert pipeline.main(['reproduce', '--dry-run', '--set', *TINY]) == 2
    assert capsys.readouterr().err == (f'rag-lib: cache folder {cache}: {cache} takes no writes (Read-only file '
                                       f'system); fix: make it writable, or point RAG_LIB_CACHE at a writable '
                                       'folder\nrag-lib: nothing was run\n')
    assert list(cache.iterdir()) == []


def test_full_disk_writing_claims_is_one_line_and_keeps_the_run(env, monkeypatch, capsys):
    "A full disk when CLAIMS.md is written gave a traceback; now one line, exit 1, the finished notebooks kept."
    run = finished(env)
    (run / 'CLAIMS.md').write_text('# the last claims\n')
    real = chain.atomic_write_text
    def full(path, text):   # a full disk: the error of `write` names no file
        if Path(path).name == 'CLAIMS.md': raise OSError(errno.ENOSPC, 'No space left on device')
        return real(path, text)
    monkeypatch.setattr(chain, 'atomic_write_text', full)
    assert pipeline.main(['reproduce', '--set', *TINY]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"rag-lib: could not write {run / 'CLAIMS.md'} during the manifest and CLAIMS.md (No space "
                          f'left on device); kept 7 finished notebook(s) in {run} (01_data, ') and err.count('\n') == 1
    assert err.endswith('; fix: free space on its disk, then run the same command again (finished notebooks are '
                        'reused)\n')
    assert (run / 'CLAIMS.md').read_text() == '# the last claims\n'
    monkeypatch.setattr(chain, 'atomic_write_text', real)
    assert pipeline.main(['reproduce', '--set', *TINY]) == 0   # freed: the same command finishes, reusing all seven
    assert '7 reused' in capsys.readouterr().out
    assert (run / 'CLAIMS.md').read_text().startswith('# Claims of the papers')

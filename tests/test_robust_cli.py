"""Issue 19, items 3-6 and 8, tried the way a user would: Ctrl-C on both command lines (a real SIGINT to the
process group, as a terminal sends it), bad input to the training command line as a subprocess, and the chain on
the smallest profile its checks accept (every notebook reports "no observations" where it has none, never crashes).
"""
import json, os, signal, subprocess, sys, time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RAG_LIB = [sys.executable, '-c', 'import sys; from rag_lib.pipeline import main; sys.exit(main(sys.argv[1:]))']
TRAIN = [sys.executable, '-m', 'rag_lib.train']
# the smallest sizes the profile's checks accept, on the generated world and the model-free scripted backend
SMALLEST = ['name=smallest', 'datasets=world', 'n_questions=1', 'agent_questions=1', 'agents=rule',
            'llm_backend=scripted', 'bridge_questions=1', 'bridge_llm_questions=1', 'grasp_questions=1', 'train_steps=0',
            'top_k=1', 'candidates=1', 'react_shown=1',
            'rerank_questions=1', 'rerank_llm_questions=1', 'rerank_seeds=1', 'rerank_datasets=world']


@pytest.fixture
def env(tmp_path):
    "Environment of a subprocess: a fresh artifacts folder and cache, the checkout under test first on the path."
    return {**os.environ, 'RAG_LIB_ARTIFACTS': str(tmp_path / 'artifacts'), 'RAG_LIB_CACHE': str(tmp_path / 'cache'),
            'PYTHONPATH': os.pathsep.join([str(ROOT), os.environ.get('PYTHONPATH', '')])}


def interrupt(cmd, env, when, timeout=600):
    "Start `cmd`, send SIGINT to its process group once `when()` holds; (exit status, stderr lines)."
    # SIGINT as a terminal's foreground job has it: a test run started in the background (`&`, nohup) ignores
    # SIGINT, and an ignored signal stays ignored in every process it starts
    p = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.time() + timeout
    while not when():
        assert p.poll() is None and time.time() < deadline, 'ended or stalled before the interrupt'
        time.sleep(0.2)
    os.killpg(p.pid, signal.SIGINT)
    _, err = p.communicate(timeout=120)
    noise = ('[IPKernelApp] WARNING',)   # the kernel's own start-up warning, printed before any interrupt
    return p.returncode, [l for l in err.splitlines() if l.strip() and not l.startswith(noise) and '%|' not in l]


def test_ctrl_c_on_the_chain_is_one_line(env, tmp_path):
    "Issue 19 item 6: Ctrl-C printed 39-70 lines of KeyboardInterrupt/DeadKernelError; now one line, exit 130."
    run = tmp_path / 'artifacts' / 'runs'
    started = lambda: any(run.glob('*/02_retrieval.ipynb'))   # papermill writes the copy as it starts executing
    rc, lines = interrupt([*RAG_LIB, 'reproduce', '--set', *SMALLEST], env, started)
    assert rc == 130, lines
    assert len(lines) == 1, lines
    assert lines[0].startswith('rag-lib: interrupted during 02_retrieval; kept 1 finished notebook(s) in ')
    assert '(01_data)' in lines[0] and lines[0].endswith(f"resume: rag-lib reproduce --set {' '.join(SMALLEST)}")
    rc = subprocess.run([*RAG_LIB, 'status', '--set', *SMALLEST], env=env, cwd=ROOT, capture_output=True, text=True)
    assert rc.returncode == 0 and '01_data                  cached' in rc.stdout   # what it said it kept, it kept


def test_ctrl_c_on_the_trainer_is_one_line(env, tmp_path):
    "Issue 19 item 6 for `python -m rag_lib.train`: one line saying what was kept and how to resume."
    out = tmp_path / 'eval'
    cmd = [*TRAIN, '--stage', 'eval', '--out', str(out), '--questions', '2', '--threads', '1']
    rc, lines = interrupt(cmd, env, lambda: out.is_dir())   # the checks passed: the folder is made, then the model loads
    assert rc == 130, lines
    assert lines == [f'python -m rag_lib.train: interrupted; the finished questions are kept in {out}; '
                     f'resume: python -m rag_lib.train --stage eval --out {out} --questions 2 --threads 1'], lines


@pytest.mark.parametrize('argv, says', [
    (['--stage', 'eval', '--policy', 'no/such'], "--policy no/such: not 'base'"),
    (['--stage', 'grpo', '--set', 'steps'], "--set expects KEY=VALUE, got 'steps'"),
    (['--stage', 'grpo', '--set', 'steps=abc'], "GRPOConfig.steps = 'abc' is not allowed"),
    (['--stage', 'grpo', '--set', 'init_adapter=no/such'], 'init_adapter=no/such: no LoRA adapter there'),
    (['--stage', 'eval', '--questions=0'], '--questions 0: must be >= 1'),
    (['--stage', 'grpo', '--set', 'weight_decay=NaN'], 'GRPOConfig.weight_decay must be a finite number, not nan'),
])
def test_trainer_bad_input_is_one_line_and_creates_nothing(env, tmp_path, argv, says):
    "Issue 19 item 3: tracebacks of 15 lines, an empty output folder, a config.json that blocked the corrected rerun."
    out = tmp_path / 'run'
    r = subprocess.run([*TRAIN, '--out', str(out), *argv], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and r.stderr.count('\n') == 1 and says in r.stderr, r.stderr
    assert not out.exists()


def test_smallest_profile_runs_every_notebook(env, tmp_path):
    """Issue 19 item 8: every experiment notebook runs on the smallest profile the checks accept (the bridge study
    with one question of the rule agent failed with KeyError 'rule'), and the run is complete."""
    r = subprocess.run([*RAG_LIB, 'reproduce', '--set', *SMALLEST], env=env, cwd=ROOT, capture_output=True, text=True,
                       timeout=1200)
    assert r.returncode == 0, r.stderr[-3000:]
    m = json.loads(next((tmp_path / 'artifacts' / 'runs').glob('smallest-*/manifest.json')).read_text())
    assert m['complete'] and all(n['status'] == 'done' for n in m['notebooks'])
    notes = {n['notebook']: n['note'] for n in m['notebooks']}
    assert notes['04_bridge.ipynb'].startswith('no observations: '), notes   # said, not crashed
    assert '04_bridge: no observations: ' in r.stdout


def test_bridge_study_without_entity_observations(env, tmp_path):
    """Issue 19 item 8 (the example it gives): three bridge questions of the rule agent failed in 04_bridge with
    KeyError 'rule' (an empty entity-propagation table); now the notebook says so and records no propagation claim."""
    r = subprocess.run([*RAG_LIB, 'reproduce', '--only', '04_bridge', '--set', 'name=bridge3', 'datasets=world',
                        'n_questions=1', 'agent_questions=1', 'agents=rule', 'llm_backend=scripted',
                        'bridge_agents=rule', 'bridge_questions=3', 'bridge_llm_questions=1', 'bridge_pool=1'], env=env, cwd=ROOT, capture_output=True, text=True,
                       timeout=1200)
    assert r.returncode == 0, r.stderr[-3000:]
    run = next((tmp_path / 'artifacts' / 'runs').glob('bridge3-*'))
    assert 'rule: no entity observations' in (run / '04_bridge.ipynb').read_text()
    claims = (run / 'tables' / 'bridge_claims.csv').read_text()
    assert 'bridge.cell_c_share' in claims and 'bridge.propagation_ratio' not in claims, claims   # unmeasured: no row


def test_a_second_training_run_on_one_folder_is_one_line(env, tmp_path):
    """Two warm starts on one `--out` at once both ran (teacher.jsonl held every example twice, teacher.json said
    kept: 8); now the second stops at once, one line naming the holder, exit 2, nothing written by it. The holder
    here is a process that holds the folder's lock and sleeps; killed, its lock file left behind is taken over."""
    out = tmp_path / 'warm'
    holder = subprocess.Popen([sys.executable, '-c', 'import sys, time\nfrom rag_lib.core import folder_lock\n'
                               'with folder_lock(sys.argv[1]): print("held", flush=True); time.sleep(300)', str(out)],
                              env=env, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == 'held\n'
        r = subprocess.run([*TRAIN, '--stage', 'warm-start', '--out', str(out), '--set', 'world_questions=2'],
                           env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert (r.returncode, r.stderr) == \
            (2, f'python -m rag_lib.train: {out} is being written by another run (pid {holder.pid})\n')
        assert sorted(p.name for p in out.iterdir()) == ['.lock']   # the second run wrote nothing
    finally:
        holder.kill(); holder.wait()
    from rag_lib.core import folder_lock
    with folder_lock(out): assert (out / '.lock').read_text() == f'pid {os.getpid()}'   # a dead holder's: taken over


def test_damaged_checkpoint_is_one_line_before_any_loading(env, tmp_path):
    "A checkpoint that does not match its seal stopped the resumed run with a traceback (exit 1); now its fix, exit 2."
    from rag_lib.core import seal_dir
    ckpt = tmp_path / 'run' / 'checkpoints' / 'step-000002'
    ckpt.mkdir(parents=True)
    (ckpt / 'trainable.safetensors').write_bytes(bytes(range(256)))
    seal_dir(ckpt)
    (ckpt / 'trainable.safetensors').write_bytes(bytes(range(255)) + b'\0')
    r = subprocess.run([*TRAIN, '--stage', 'grpo', '--out', str(tmp_path / 'run')], env=env, cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert (r.returncode, r.stderr) == (2, f'python -m rag_lib.train: checkpoint {ckpt}: trainable.safetensors does not '
                                           f'match its SHA-256; it is not used. Fix: delete {ckpt} (the run resumes '
                                           'from the checkpoint before it, or from the start)\n')

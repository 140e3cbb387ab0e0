"The verl launch files: every config in configs/verl composes on verl's own and passes its validation; the scripts parse and refuse missing inputs."
import os, subprocess, sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted(p for p in (ROOT / 'configs' / 'verl').glob('*.yaml') if not p.stem.endswith('_base'))


def test_configs_found():
    assert {p.stem for p in CONFIGS} >= {'grasp_grpo', 'grasp_grpo_smoke'}


@pytest.mark.parametrize('path', CONFIGS, ids=lambda p: p.stem)
def test_config_composes_on_verl(path, monkeypatch):
    from rag_lib.verl_integration import check_verl_config, unknown_verl_keys, compose_verl_config
    monkeypatch.setenv('SMOKE_MODEL', '/models/smoke')
    cfg = check_verl_config(path)
    assert cfg.actor_rollout_ref.rollout.multi_turn.enable and cfg.algorithm.adv_estimator == 'grpo'
    assert unknown_verl_keys(compose_verl_config(path, ['+trainer.n_gpu_per_node=2'])) == ['trainer.n_gpu_per_node']


@pytest.mark.parametrize('script', ['train_grasp.sh', 'gpu_smoke.sh'])
def test_shell_scripts_parse(script):
    subprocess.run(['bash', '-n', str(ROOT / 'scripts' / script)], check=True)


def test_train_script_needs_its_data(tmp_path):
    r = subprocess.run(['bash', str(ROOT / 'scripts' / 'train_grasp.sh'), 'paper'], capture_output=True, text=True,
                       env={**os.environ, 'GRASP_DATA': str(tmp_path / 'none')})
    assert r.returncode == 1 and 'train.parquet missing' in r.stderr and 'build_verl_data.py' in r.stderr
    r = subprocess.run(['bash', str(ROOT / 'scripts' / 'train_grasp.sh'), 'huge'], capture_output=True, text=True)
    assert r.returncode == 2 and 'usage' in r.stderr


def test_smoke_script_needs_a_model():
    r = subprocess.run(['bash', str(ROOT / 'scripts' / 'gpu_smoke.sh')], capture_output=True, text=True,
                       env={k: v for k, v in os.environ.items() if k != 'SMOKE_MODEL'})
    assert r.returncode != 0 and 'SMOKE_MODEL' in r.stderr


@pytest.mark.parametrize('script', ['build_verl_data.py', 'vllm_agents.py'])
def test_python_scripts_help(script):
    r = subprocess.run([sys.executable, str(ROOT / 'scripts' / script), '--help'], capture_output=True, text=True)
    assert r.returncode == 0 and '--out' in r.stdout

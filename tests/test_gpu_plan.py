"""The `gpu` profile's plan, on a machine without a GPU: `rag-lib reproduce --profile gpu --dry-run` with placeholder
model folders (a local Hugging Face cache holding config and weight files, no real weights) prints GRASP's setting
(Qwen2.5-3B-Instruct for Base and the trained policy, the policy folder), hundreds of live trajectories, and each
vLLM engine's share of GPU memory; it executes and writes nothing."""
import os, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAIN = 'import sys; from rag_lib.pipeline import main; sys.exit(main(sys.argv[1:]))'
MODELS = ('Qwen/Qwen2.5-7B-Instruct', 'Qwen/Qwen2.5-3B-Instruct', 'Qwen/Qwen3-Embedding-0.6B',
          'tomaarsen/Qwen3-Reranker-0.6B-seq-cls')


def placeholder(folder: Path, mb: int = 1) -> Path:
    "A model folder with a config, a tokenizer config and `mb` MB of weight file (zeros)."
    folder.mkdir(parents=True, exist_ok=True)
    for f in ('config.json', 'tokenizer_config.json'): (folder / f).write_text('{}')
    (folder / 'model.safetensors').write_bytes(b'\0' * (mb << 20))
    return folder


def hub_cache(hub: Path) -> Path:
    "A local Hugging Face cache holding a placeholder of every model of the `gpu` profile (refs/main -> snapshot)."
    rev = '0' * 40
    for m in MODELS:
        repo = hub / f"models--{m.replace('/', '--')}"
        placeholder(repo / 'snapshots' / rev)
        (repo / 'refs').mkdir(); (repo / 'refs' / 'main').write_text(rev)
    return hub


def test_gpu_dry_run_plans_grasp_on_the_3b_model(tmp_path):
    hub = hub_cache(tmp_path / 'hub')
    policy = placeholder(tmp_path / 'merged' / 'global_step_270', mb=3)   # what verl.model_merger writes
    env = {**os.environ, 'HF_HUB_CACHE': str(hub), 'HF_HUB_OFFLINE': '1', 'RAG_LIB_ARTIFACTS': str(tmp_path / 'art'),
           'PYTHONPATH': os.pathsep.join([str(ROOT), os.environ.get('PYTHONPATH', '')])}
    r = subprocess.run([sys.executable, '-c', MAIN,
                        'reproduce', '--profile', 'gpu', '--dry-run', '--set', 'datasets=world', 'bridge_dataset=world',
                        f'grasp_policy={policy}'], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert f'GRASP: Base and trained policy on Qwen/Qwen2.5-3B-Instruct; trained policy: {policy} (merged)' in out
    assert 'batches: max_live 256 live trajectories per model call' in out
    assert "vLLM engine grasp_base: Qwen/Qwen2.5-3B-Instruct, 0.28 of each GPU's memory, weights 0.0 GB" in out
    assert f"vLLM engine grasp_policy: {policy}, 0.28 of each GPU's memory" in out
    assert 'nothing was executed or written (dry run)' in out
    assert not (tmp_path / 'art').exists()


def test_gpu_dry_run_names_a_missing_policy(tmp_path):
    hub = hub_cache(tmp_path / 'hub')
    env = {**os.environ, 'HF_HUB_CACHE': str(hub), 'HF_HUB_OFFLINE': '1', 'RAG_LIB_ARTIFACTS': str(tmp_path / 'art'),
           'PYTHONPATH': os.pathsep.join([str(ROOT), os.environ.get('PYTHONPATH', '')])}
    r = subprocess.run([sys.executable, '-c', MAIN,
                        'reproduce', '--profile', 'gpu', '--dry-run', '--set', 'datasets=world', 'bridge_dataset=world',
                        f'grasp_policy={tmp_path / "nothing"}'], capture_output=True, text=True, env=env, cwd=ROOT,
                       timeout=300)
    assert r.returncode != 0
    assert 'grasp_policy:' in r.stdout + r.stderr and '--set grasp_policy=none' in r.stdout + r.stderr

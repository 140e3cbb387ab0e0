"""scripts/reader_reference.py --from-record: a committed reader record seeds a fresh runs folder (the adapter back in
float32, its config, the evaluations with their summaries rebuilt from the rows), and a record trained with another
config is refused, leaving nothing behind."""
import json, sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'scripts'))
import reader_reference as rr  # noqa: E402
from rag_lib.core import check_weights, seal_dir  # noqa: E402
from rag_lib.train import SFTConfig, apply_overrides  # noqa: E402
from rag_lib.train.loop import _record  # noqa: E402

BENCH = [('world-9', 'world', 9, 2)]


def config(**kw):
    return apply_overrides(SFTConfig(), {'agent': 'reader', 'compute_dtype': 'float32', 'lr': '1e-3', **kw})


@pytest.fixture
def record(tmp_path) -> Path:
    "A reader record as `reader_reference.py` writes one: a float16 adapter, config, log, rows of one evaluation."
    rec = tmp_path / 'record'
    (rec / 'adapter').mkdir(parents=True)
    (rec / 'adapter' / 'adapter_config.json').write_text('{}')
    save_file({'w': torch.tensor([0.5, 0.25], dtype=torch.float16)}, rec / 'adapter' / 'adapter_model.safetensors')
    seal_dir(rec / 'adapter')
    (rec / 'train.config.json').write_text(json.dumps(_record(config().resolved(), 'warm-start')))
    (rec / 'train.log.jsonl').write_text('{"step": 0}\n')
    rows = [{'qid': f'q{i}', 'case': 'gold-doc', 'group': 'bridge', 'em': float(i), 'f1': float(i),
             'abstained': False, 'answer': 'x', 'policy': 'reader'} for i in (0, 1)]
    (rec / 'eval-world-9-reader.rows.jsonl').write_text(''.join(json.dumps(r) + '\n' for r in rows))
    return rec


def test_seeds_the_adapter_in_float32(record, tmp_path):
    rr.seed_runs(record, tmp_path / 'runs', config(), BENCH)
    w = load_file(tmp_path / 'runs' / 'reader' / 'adapter' / 'adapter_model.safetensors')['w']
    assert w.dtype == torch.float32


def test_the_seeded_adapter_passes_the_loaders_check(record, tmp_path):
    rr.seed_runs(record, tmp_path / 'runs', config(), BENCH)
    check_weights(tmp_path / 'runs' / 'reader' / 'adapter', 'adapter')    # raises when the seal names other bytes


def test_seeds_the_evaluation_summary_from_rows(record, tmp_path):
    rr.seed_runs(record, tmp_path / 'runs', config(), BENCH)
    s = json.loads((tmp_path / 'runs' / 'eval-world-9' / 'reader.reader-summary.json').read_text())
    assert [(c['case'], c['group'], c['n'], c['f1']) for c in s['by_case'] if c['group'] == 'all'] == \
        [('gold-doc', 'all', 2, 0.5)]


def test_refuses_a_record_of_another_config(record, tmp_path):
    with pytest.raises(ValueError, match=r"differs in \['lr'\]"):
        rr.seed_runs(record, tmp_path / 'runs', config(lr='2e-3'), BENCH)


def test_a_refused_record_leaves_no_run(record, tmp_path):
    with pytest.raises(ValueError): rr.seed_runs(record, tmp_path / 'runs', config(lr='2e-3'), BENCH)
    assert not (tmp_path / 'runs' / 'reader').exists()

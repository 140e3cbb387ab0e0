"""The committed reference record of the trained GRASP policy (`artifacts/reference/grasp-smollm2/`,
written by `scripts/grasp_reference.py`): every file it lists is there with its SHA-256, the
adapters the default profile names are loadable LoRA folders, and the evaluation table reports
the four policies with intervals."""
import json
from pathlib import Path

import pandas as pd

from rag_lib.core import file_sha256, get_profile, profile_path

REC = Path(__file__).resolve().parents[1] / 'artifacts' / 'reference' / 'grasp-smollm2'


def test_manifest_matches_files():
    m = json.loads((REC / 'manifest.json').read_text())
    assert m['files'], 'the manifest lists no files'
    for name, sha in m['files'].items():
        assert file_sha256(REC / name) == sha, f'{name} changed since the record was written'
    assert {'warm-start', 'grpo', 'grpo-alone'} <= set(m['configs'])
    assert 'grasp_reference.py' in m['command']


def test_default_profile_adapters_exist():
    prof = get_profile('cpu')
    for field in ('grasp_adapter', 'train_init'):
        p = profile_path(getattr(prof, field))
        cfg = json.loads((p / 'adapter_config.json').read_text())
        assert (p / 'adapter_model.safetensors').stat().st_size > 0 and cfg['r'] > 0, field


def test_eval_table_has_every_policy_with_intervals():
    df = pd.read_csv(REC / 'eval.csv')
    assert set(df.policy) == {'base', 'warm-start', 'grpo-alone', 'grpo'}
    for col in ('em_ci', 'f1_ci', 'reward_ci'):
        lo_hi = df[col].str.strip('[]').str.split(', ', expand=True).astype(float)
        assert (lo_hi[0] <= df[col.replace('_ci', '')] + 1e-9).all() and (df[col.replace('_ci', '')] <= lo_hi[1] + 1e-9).all()

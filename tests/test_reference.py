"""The committed reference record of the trained GRASP policy (`artifacts/reference/grasp-smollm2/`,
written by `scripts/grasp_reference.py`): every file it lists is there with its SHA-256, the
adapters the default profile names are loadable LoRA folders, and the evaluation table reports
the four policies with intervals; the same for the reader's record (`artifacts/reference/reader-smollm2/`,
`scripts/reader_reference.py --test`): its tables cover every benchmark, policy and case."""
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
    for field in ('grasp_policy', 'train_init'):
        p = profile_path(getattr(prof, field))
        cfg = json.loads((p / 'adapter_config.json').read_text())
        assert (p / 'adapter_model.safetensors').stat().st_size > 0 and cfg['r'] > 0, field


def test_eval_table_has_every_policy_with_intervals():
    df = pd.read_csv(REC / 'eval.csv')
    assert set(df.policy) == {'base', 'warm-start', 'grpo-alone', 'grpo'}
    for col in ('em_ci', 'f1_ci', 'reward_ci'):
        lo_hi = df[col].str.strip('[]').str.split(', ', expand=True).astype(float)
        assert (lo_hi[0] <= df[col.replace('_ci', '')] + 1e-9).all() and (df[col.replace('_ci', '')] <= lo_hi[1] + 1e-9).all()


READER = REC.parent / 'reader-smollm2'   # written by `scripts/reader_reference.py --test`


def test_reader_manifest_matches_files():
    m = json.loads((READER / 'manifest.json').read_text())
    assert m['files'], 'the manifest lists no files'
    for name, sha in m['files'].items():
        assert file_sha256(READER / name) == sha, f'{name} changed since the record was written'
    assert 'reader_reference.py' in m['command'] and '--test' in m['command']
    assert m['config']['agent'] == 'reader'


def test_reader_tables_cover_every_benchmark_policy_and_case():
    for bench in ('world-9', 'world-0', 'hotpotqa', '2wikimultihopqa', 'musique'):
        df = pd.read_csv(READER / f'eval-{bench}.csv')
        assert set(df.policy) == {'always-yes', 'base', 'reader'}, bench
        assert {'gold-doc', 'gold-docs', 'top-k', 'partial', 'none'} <= set(df.case), bench
        lo_hi = df.f1_ci.str.strip('[]').str.split(', ', expand=True).astype(float)
        assert (lo_hi[0] <= df.f1 + 1e-3).all() and (df.f1 <= lo_hi[1] + 1e-3).all(), bench

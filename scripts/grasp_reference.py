"""The reference run of the trained GRASP policy on CPU: warm start, GRPO from the warm start, GRPO alone from Base,
and the held-out evaluation of Base and the three trained policies; writes the committed record.

    python scripts/grasp_reference.py --runs .cache/reference-run [--set-warm key=value ...] [--set-grpo key=value ...]
        [--grpo-alone-steps 4] [--questions 100] [--record artifacts/reference/grasp-smollm2]

Every stage resumes when the script is started again with the same arguments (finished stages are read, not rerun).
The record (`--record`) gets: the final adapter in float16 (`adapter/`) and the warm-start adapter (`warm-start-adapter/`),
the logs and configs of the training stages, the evaluation table with bootstrap intervals (`eval.csv`, `eval.md`),
the training curve (`training_curve.png`), and `manifest.json` (commands, configs, data, wall times, load averages,
package versions, SHA-256 of every file).
"""
import argparse, json, shutil, sys
from pathlib import Path

from stage_times import read_times, timed_stage, write_manifest   # scripts/stage_times.py

STAGES = ('warm-start', 'grpo', 'grpo-alone', 'eval-base', 'eval-warm-start', 'eval-grpo-alone', 'eval-grpo')


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--runs', default='.cache/reference-run', help='folder of the stage runs (resumable)')
    ap.add_argument('--record', default=None, help='where the record goes (default: artifacts/reference/grasp-smollm2)')
    ap.add_argument('--set-warm', nargs='*', default=[], metavar='KEY=VALUE', help='SFTConfig overrides')
    ap.add_argument('--set-grpo', nargs='*', default=[], metavar='KEY=VALUE', help='GRPOConfig overrides (both GRPO runs)')
    ap.add_argument('--grpo-alone-steps', type=int, default=None, help='steps of GRPO from Base (default: as the GRPO run)')
    ap.add_argument('--questions', type=int, default=100, help='held-out world questions evaluated')
    ap.add_argument('--only', nargs='*', default=None, choices=STAGES, help='run only these stages (the record is written anyway)')
    a = ap.parse_args(argv)

    import matplotlib; matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    import pandas as pd
    from rag_lib.core import atomic_write_text, read_jsonl
    from rag_lib.pipeline import markdown_table
    from rag_lib.train import (GRPOConfig, SFTConfig, apply_overrides, config_to_dict, reference_dir, run_eval, train_grpo, train_sft,
                               cast_safetensors)

    runs = Path(a.runs); runs.mkdir(parents=True, exist_ok=True)
    record = Path(a.record) if a.record else reference_dir()
    kv = lambda xs: dict(x.split('=', 1) for x in xs)
    warm_cfg = apply_overrides(SFTConfig(), kv(a.set_warm))
    grpo_cfg = apply_overrides(GRPOConfig(), {**kv(a.set_grpo), 'init_adapter': str(runs / 'warm-start' / 'adapter')})
    alone_cfg = apply_overrides(GRPOConfig(), {**kv(a.set_grpo), **({'steps': str(a.grpo_alone_steps)} if a.grpo_alone_steps else {})})
    turns = grpo_cfg.max_turns
    times = read_times(runs)
    policies = {'base': 'base', 'warm-start': runs / 'warm-start', 'grpo-alone': runs / 'grpo-alone', 'grpo': runs / 'grpo'}
    work = {'warm-start': lambda: train_sft(warm_cfg, runs / 'warm-start'),
            'grpo': lambda: train_grpo(grpo_cfg, runs / 'grpo'),
            'grpo-alone': lambda: train_grpo(alone_cfg, runs / 'grpo-alone'),
            **{f'eval-{p}': (lambda p=p: run_eval(runs / 'eval', str(policies[p]), p, a.questions, turns)) for p in policies}}
    for stage in STAGES:
        if a.only is not None and stage not in a.only: continue
        timed_stage(runs, times, stage, work[stage])

    # the record
    record.mkdir(parents=True, exist_ok=True)
    for src, dst in ((runs / 'grpo' / 'adapter', record / 'adapter'), (runs / 'warm-start' / 'adapter', record / 'warm-start-adapter')):
        if src.exists():
            shutil.rmtree(dst, ignore_errors=True); shutil.copytree(src, dst)
            cast_safetensors(dst / 'adapter_model.safetensors', __import__('torch').float16)
    for stage in ('warm-start', 'grpo', 'grpo-alone'):
        for f in ('config.json', 'log.jsonl', 'teacher.json'):
            if (runs / stage / f).exists(): shutil.copyfile(runs / stage / f, record / f'{stage}.{f}')
    rows = []
    for p in policies:
        s = runs / 'eval' / f'{p}.summary.json'
        if s.exists():
            d = json.loads(s.read_text())
            rows.append({'policy': p, 'n': d['questions'], **{m: d[m][0] for m in ('em', 'f1', 'reward')},
                         **{f'{m}_ci': f'[{d[m][1]:.3f}, {d[m][2]:.3f}]' for m in ('em', 'f1', 'reward')},
                         **{m: d[m][0] for m in ('accuracy', 'grounded', 'complementary', 'efficiency', 'turns')}})
            shutil.copyfile(runs / 'eval' / f'{p}.rows.jsonl', record / f'eval-{p}.rows.jsonl')
    if rows:
        df = pd.DataFrame(rows)
        df.to_csv(record / 'eval.csv', index=False)
        atomic_write_text(record / 'eval.md', markdown_table(df) + '\n')
        print(markdown_table(df))
    logs = {s: read_jsonl(runs / s / 'log.jsonl') for s in ('warm-start', 'grpo', 'grpo-alone')}
    if any(logs.values()):
        fig, ax = plt.subplots(1, 3, figsize=(14, 3.6))
        if logs['warm-start']:
            ax[0].plot([r['step'] + 1 for r in logs['warm-start']], [r['loss'] for r in logs['warm-start']], marker='o')
            ax[0].set(title='warm start: output-token cross-entropy', xlabel='update', ylabel='loss')
        for i, s in ((1, 'grpo'), (2, 'grpo-alone')):
            if not logs[s]: continue
            x = [r['step'] + 1 for r in logs[s]]
            for k, lab in (('reward', 'total'), ('reward_accuracy', 'accuracy'), ('reward_grounded', 'grounded'),
                           ('reward_complementary', 'complementary'), ('reward_efficiency', 'efficiency')):
                ax[i].plot(x, [r[k] for r in logs[s]], marker='o', label=lab)
            ax[i].set(title=f'{s}: mean rollout reward', xlabel='GRPO step', ylabel='reward', ylim=(0, 2))
            ax[i].legend(fontsize=7)
        fig.tight_layout(); fig.savefig(record / 'training_curve.png', dpi=110); plt.close(fig)
    write_manifest(record, times,
                   command=' '.join([Path(sys.executable).name, *sys.argv]) if argv is None
                   else f'python scripts/grasp_reference.py {" ".join(argv)}',
                   configs={'warm-start': config_to_dict(warm_cfg), 'grpo': config_to_dict(grpo_cfg),
                            'grpo-alone': config_to_dict(alone_cfg)},
                   data={'train': f'rag_lib.world.load_world(seed=s, n={warm_cfg.world_questions}) for s in '
                                  f'{list(warm_cfg.train_worlds)} (other entities than the evaluation world)',
                         'eval': f'load_benchmark("world", n={a.questions}, seed=42, corpus_scope="sample", world_seed=0) '
                                 '(the default chain\'s world sample), greedy decoding, GRASP agent with max_turns='
                                 f'{turns}'})
    print(f'record: {record.resolve()}')
    return 0


if __name__ == '__main__':
    sys.exit(main())

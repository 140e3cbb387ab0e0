"""The reference run of the trained reader on CPU: supervised fine-tuning (`agent=reader`), then its evaluation beside
the untrained SmolLM2 and an always-"yes" answerer; writes the committed record.

    python scripts/reader_reference.py --runs .cache/reader-run [--set key=value ...] [--questions 100]
        [--test] [--real-questions 50] [--record artifacts/reference/reader-smollm2]

Without `--test` only the validation world (world 9) is evaluated: every choice is made there. `--test` adds the test
world (world 0) and the three real samples; run it once, for the final reader. Every stage resumes when the script is
started again with the same arguments (finished stages are read, not rerun); `--from-record` first fills `--runs` from
the committed record where it lacks the work (`seed_runs`: the adapter, its config and log, the evaluation rows and
times), so a fresh clone adds the test evaluation without training again. The record gets the adapter in float16
(`adapter/`), the training log, config and teacher counts, one evaluation table per benchmark (`eval-<benchmark>.md`,
per case and question group with 95% bootstrap intervals), the rows, and `manifest.json` (command, config, wall times,
load averages, package versions, SHA-256 of every file).
"""
import argparse, json, shutil, sys
from pathlib import Path

from stage_times import read_times, timed_stage, write_manifest   # scripts/stage_times.py

REAL = ('hotpotqa', '2wikimultihopqa', 'musique')
POLICIES = ('always-yes', 'base', 'reader')


def _always_yes(out: Path, benchmark: str, world: int, n: int) -> None:
    "The summary of an answerer that says 'yes' to every case, as `run_reader_eval` writes one."
    from rag_lib.core import atomic_write_text, write_jsonl
    from rag_lib.llm import TransformersBackend
    from rag_lib.train import TeacherBackend, heldout
    from rag_lib.train.reader import reader_eval, reader_summary
    qs, retrieval = heldout(benchmark, n, world=world)
    backend = TeacherBackend(TransformersBackend('smollm2'), lambda r, ctx: 'Answer: yes\n', name='always-yes')
    rows = reader_eval(backend, retrieval, qs)
    for r in rows: r['policy'] = 'always-yes'
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl(out / 'always-yes.reader-rows.jsonl', rows)
    atomic_write_text(out / 'always-yes.reader-summary.json', json.dumps(
        {'policy': 'always-yes', 'benchmark': benchmark, 'world': world, 'questions': len(qs),
         'by_case': reader_summary(rows)}, indent=1))


def seed_runs(record: Path, runs: Path, cfg, benches: list) -> list[str]:
    """Fill `runs` from the committed `record` where it lacks the work (one line per item seeded): the record's adapter
    (float16 there, float32 here: the weights a user of the record gets) with its config, log and teacher counts becomes
    the finished training run, each evaluation the record holds rows of becomes a finished evaluation (its summary
    rebuilt from the rows), and the record's stage times are kept. ValueError when the record was trained with another
    config than `cfg` (this call's `--set`; `train.loop.run_conflict` decides): its adapter is not this run's."""
    from rag_lib.core import atomic_write_text, read_jsonl
    from rag_lib.train import cast_safetensors
    from rag_lib.train.loop import run_conflict
    from rag_lib.train.reader import reader_summary
    import torch
    out, d = [], runs / 'reader'
    if not (d / 'adapter' / 'adapter_config.json').exists() and (record / 'adapter' / 'adapter_config.json').exists():
        d.mkdir(parents=True, exist_ok=True)
        for f in ('config.json', 'log.jsonl', 'teacher.json'):
            if (record / f'train.{f}').exists(): shutil.copyfile(record / f'train.{f}', d / f)
        shutil.copytree(record / 'adapter', d / 'adapter', dirs_exist_ok=True)
        if why := run_conflict(d, cfg.resolved(), 'warm-start'):   # as train_sft compares it
            shutil.rmtree(d)
            raise ValueError(f'the record {record} was trained with another config than this --set: {why}')
        cast_safetensors(d / 'adapter' / 'adapter_model.safetensors', torch.float32)
        out.append(f"the trained reader: {record / 'adapter'} -> {d / 'adapter'}")
    for label, bench, world, n in benches:
        ev = runs / f'eval-{label}'
        for p in POLICIES:
            src = record / f'eval-{label}-{p}.rows.jsonl'
            if (ev / f'{p}.reader-summary.json').exists() or not src.exists(): continue
            rows = read_jsonl(src)
            ev.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, ev / f'{p}.reader-rows.jsonl')
            atomic_write_text(ev / f'{p}.reader-summary.json', json.dumps(
                {'policy': p, 'benchmark': bench, 'world': world if bench == 'world' else None, 'agent': 'reader',
                 'questions': len({r['qid'] for r in rows}), 'seeded_from': str(record),
                 'by_case': reader_summary(rows)}, indent=1))
            out.append(f'evaluation {p!r} on {label}: {src} -> {ev}')
    if (m := record / 'manifest.json').exists():
        times, kept = read_times(runs), json.loads(m.read_text()).get('stage_times', {})
        if new := {k: v for k, v in kept.items() if k not in times}:
            atomic_write_text(runs / 'stage_times.json', json.dumps({**times, **new}, indent=1))
            out.append(f'stage times of {sorted(new)}')
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--runs', default='.cache/reader-run', help='folder of the stage runs (resumable)')
    ap.add_argument('--record', default='artifacts/reference/reader-smollm2', help='where the record goes')
    ap.add_argument('--set', nargs='*', default=[], metavar='KEY=VALUE', help='SFTConfig overrides (agent=reader is set)')
    ap.add_argument('--questions', type=int, default=100, help='world questions evaluated (validation and test)')
    ap.add_argument('--real-questions', type=int, default=50, help='questions of each real sample evaluated (--test)')
    ap.add_argument('--test', action='store_true', help='also the test world and the real samples: once, at the end')
    ap.add_argument('--threads', type=int, default=None, help='torch threads of the evaluations')
    ap.add_argument('--from-record', action='store_true',
                    help='first seed --runs from the committed --record where it lacks the work (adapter, config, '
                         'log, evaluations, times): a fresh clone adds the test evaluation without training again')
    a = ap.parse_args(argv)

    import pandas as pd
    from rag_lib.core import atomic_write_text
    from rag_lib.pipeline import markdown_table
    from rag_lib.train import SFTConfig, apply_overrides, cast_safetensors, config_to_dict, train_sft
    from rag_lib.train.reader import run_reader_eval

    runs, record = Path(a.runs), Path(a.record)
    runs.mkdir(parents=True, exist_ok=True)
    cfg = apply_overrides(SFTConfig(), {**dict(x.split('=', 1) for x in a.set), 'agent': 'reader'})
    benches = [('world-9', 'world', 9, a.questions)]
    if a.test: benches += [('world-0', 'world', 0, a.questions)] + [(b, b, 0, a.real_questions) for b in REAL]
    if a.from_record:
        try: seeded = seed_runs(record, runs, cfg, benches)
        except ValueError as e:
            print(f'scripts/reader_reference.py: {e}', file=sys.stderr); return 2
        for line in seeded: print(f'seeded from the record: {line}')
    times = read_times(runs)
    # stage -> (work, the file a finished stage leaves)
    stages = {'train': (lambda: train_sft(cfg, runs / 'reader'), runs / 'reader' / 'adapter' / 'adapter_config.json')}
    for label, bench, world, n in benches:
        out = runs / f'eval-{label}'
        stages[f'{label}-always-yes'] = (lambda out=out, bench=bench, world=world, n=n: _always_yes(out, bench, world, n),
                                         out / 'always-yes.reader-summary.json')
        for p, pol in (('base', 'base'), ('reader', str(runs / 'reader'))):
            stages[f'{label}-{p}'] = (lambda out=out, pol=pol, p=p, bench=bench, world=world, n=n: run_reader_eval(
                out, pol, p, n, world, a.threads, benchmark=bench), out / f'{p}.reader-summary.json')
    for stage, (work, done) in stages.items():
        if done.exists(): continue
        timed_stage(runs, times, stage, work)

    # the record
    record.mkdir(parents=True, exist_ok=True)
    src = runs / 'reader' / 'adapter'
    shutil.rmtree(record / 'adapter', ignore_errors=True); shutil.copytree(src, record / 'adapter')
    cast_safetensors(record / 'adapter' / 'adapter_model.safetensors', __import__('torch').float16)
    for f in ('config.json', 'log.jsonl', 'teacher.json'):
        shutil.copyfile(runs / 'reader' / f, record / f'train.{f}')
    for label, *_ in benches:
        rows = []
        for p in POLICIES:
            s = runs / f'eval-{label}' / f'{p}.reader-summary.json'
            if not s.exists(): continue
            for r in json.loads(s.read_text())['by_case']:
                rows.append({'policy': p, 'case': r['case'], 'group': r['group'], 'n': r['n'],
                             'em': round(r['em'], 3), 'f1': round(r['f1'], 3),
                             'f1_ci': f"[{r['f1_ci'][0]:.3f}, {r['f1_ci'][1]:.3f}]",
                             'abstained': round(r['abstained'], 3)})
            shutil.copyfile(runs / f'eval-{label}' / f'{p}.reader-rows.jsonl', record / f'eval-{label}-{p}.rows.jsonl')
        if rows:
            df = pd.DataFrame(rows).sort_values(['case', 'group', 'policy'], kind='stable')
            df.to_csv(record / f'eval-{label}.csv', index=False)
            atomic_write_text(record / f'eval-{label}.md', markdown_table(df) + '\n')
            print(f'## {label}\n' + markdown_table(df))
    cmd = ' '.join(['python', 'scripts/reader_reference.py', *(sys.argv[1:] if argv is None else argv)])
    write_manifest(record, times, command=cmd, config=config_to_dict(cfg),
                   data={'train': f'rag_lib.world.load_world(seed=s, n={cfg.world_questions}) for s in '
                                  f'{list(cfg.train_worlds)}',
                         'eval': {label: f'rag_lib.train.heldout({bench!r}, n={n}, seed=42, world={world})'
                                  for label, bench, world, n in benches}})
    print(f'record: {record.resolve()}')
    return 0


if __name__ == '__main__':
    sys.exit(main())

"""The reference record of a trained agent policy (GRASP's or ReAct's) on CPU, from a recipe: its training stages in
order (warm starts, DAgger rounds, GRPO with GRASP's or the answer-only reward), the evaluation of the stages it names
beside an always-"yes" answerer and the rule policy, and paired differences between them; writes the committed record.

    python scripts/agent_reference.py configs/reference/grasp-smollm2.json [--runs runs] [--test]
        [--questions 100] [--real-questions 50] [--threads N] [--record DIR] [--from-record] [--only STAGE ...]

A recipe (JSON) names the record, the agent and its turn budget, the stages, the policies evaluated and the pairs
compared:

    {"record": "artifacts/reference/grasp-smollm2", "agent": "grasp", "max_turns": 8,
     "stages": [{"name": "warm", "stage": "warm-start", "set": {"train_worlds": [1, 2, 3], "lr": 0.001}},
                {"name": "dagger", "stage": "warm-start", "init": "warm", "set": {"dagger_questions": 300}},
                {"name": "grpo", "stage": "grpo", "init": "dagger", "set": {"steps": 20}}],
     "evaluate": ["dagger", "grpo"], "final": ["grpo"], "pairs": [["grpo", "dagger"]]}

A stage runs `python -m rag_lib.train --stage <stage> --out <runs>/<name> --set ...` in this process; `init` starts it
from an earlier stage's adapter (`init_adapter=<runs>/<init>/adapter`) or, given a path (with a '/'), from an adapter
an earlier record committed; the recipe's `agent` is set for every warm start, its `max_turns` and `compute_dtype`
(default "auto": bf16 where this CPU gains from it, `core.resolve_compute`) for every stage that sets none of its own;
an evaluation always runs at the recipe's.

Without `--test` only the validation world 9 is evaluated: every choice is made there. `--test` adds the test world 0
and the three real samples for the recipe's `final` policies (default: all it evaluates): run it once, for the final
policies. Started again with the same arguments, every stage
resumes (finished ones are read, not rerun); finished work the recipe no longer matches (a stage's config, an
evaluation's turn budget or size) stops the script with one line per item (`stale_work`), never reused silently.
`--from-record` first fills `--runs` from the committed record where it lacks the work (`seed_runs`), so a fresh clone
adds a stage or an evaluation without retraining the stages before it.

The record gets the evaluated adapters (`<name>-adapter/`, float32: the weights the evaluation ran), a stage still
in progress its latest checkpoint (`<name>-resume/`: weights, optimizer state, step, sealed; removed once the stage
ends), so a later session's fresh clone resumes it with `--from-record` instead of starting again; each stage's config,
log and teacher counts (`<name>.config.json`, ...), one table per benchmark (`eval-<benchmark>.md/.csv`: EM
and F1 per question group with 95% bootstrap intervals, beside always-"yes" and the rule policy), the paired
differences (`paired-<benchmark>.md/.csv`), the evaluation rows, summaries and trajectories, and `manifest.json` (the
command, the recipe, every stage's config, wall times with load averages, package versions, SHA-256 of every file).
NOTES.md, written by hand, is left as it is.
"""
import argparse, json, shutil, sys
from pathlib import Path

from stage_times import read_times, timed_stage, write_manifest   # scripts/stage_times.py

REAL = ('hotpotqa', '2wikimultihopqa', 'musique')
GROUPS = ('bridge', 'comparison', 'yes/no', 'all')


def read_recipe(path: Path) -> dict:
    "The recipe in JSON file `path`, checked: ValueError naming the file and the field that is wrong."
    try: r = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as e: raise ValueError(f'recipe {path}: {e}') from e
    for k in ('record', 'agent', 'stages', 'evaluate'):
        if k not in r: raise ValueError(f'recipe {path}: field {k!r} is missing')
    names = [s.get('name') for s in r['stages']]
    for i, s in enumerate(r['stages']):
        where = f'recipe {path}: stages[{i}]'
        if not s.get('name') or s.get('stage') not in ('warm-start', 'grpo'):
            raise ValueError(f"{where} needs a 'name' and a 'stage' of 'warm-start' or 'grpo'")
        if s.get('init') is not None and s['init'] not in names[:i] and '/' not in s['init']:
            raise ValueError(f"{where}: init {s['init']!r} is neither an earlier stage ({names[:i]}) nor a folder")
        if 'init_adapter' in s.get('set', {}): raise ValueError(f"{where}: give 'init' (a stage), not init_adapter")
        if s['stage'] == 'grpo' and r['agent'] != 'grasp':
            raise ValueError(f"{where}: GRPO trains GRASP's agent (`train.loop.grasp_agent`), not {r['agent']!r}")
    if len(set(names)) != len(names): raise ValueError(f'recipe {path}: stage names repeat: {names}')
    for n in [*r['evaluate'], *(x for p in r.get('pairs', []) for x in p)]:
        if n not in names: raise ValueError(f'recipe {path}: {n!r} (evaluate/pairs) is not a stage ({names})')
    for n in r.get('final', []):
        if n not in r['evaluate']: raise ValueError(f"recipe {path}: final {n!r} is not evaluated ({r['evaluate']})")
    r.setdefault('max_turns', 8); r.setdefault('compute_dtype', 'auto'); r.setdefault('final', list(r['evaluate']))
    return r


def evaluated(recipe: dict, label: str) -> list[str]:
    "The policies evaluated on benchmark `label`: every one the recipe evaluates on the validation world, else `final`."
    return recipe['evaluate'] if label == 'world-9' else recipe['final']


def stage_config(recipe: dict, stage: dict, runs: Path):
    "The `SFTConfig`/`GRPOConfig` of recipe stage `stage` (its `set`, the recipe's agent, the `init` stage's adapter)."
    from rag_lib.train import GRPOConfig, SFTConfig, apply_overrides
    sets = {k: v if isinstance(v, str) else json.dumps(v) for k, v in stage.get('set', {}).items()}
    if stage['stage'] == 'warm-start': sets = {'agent': recipe['agent'], **sets}
    sets.setdefault('max_turns', str(recipe['max_turns']))
    sets.setdefault('compute_dtype', recipe['compute_dtype'])
    if init := stage.get('init'): sets['init_adapter'] = init if '/' in init else str(runs / init / 'adapter')
    base = SFTConfig() if stage['stage'] == 'warm-start' else GRPOConfig()
    return apply_overrides(base, sets, where=f"recipe stage {stage['name']!r}")


def benchmarks(test: bool, n: int, n_real: int) -> list[tuple[str, str, int, int]]:
    "(label, benchmark, world, questions) evaluated: the validation world; with `test` the test world and real samples."
    out = [('world-9', 'world', 9, n)]
    if test: out += [('world-0', 'world', 0, n)] + [(b, b, 0, n_real) for b in REAL]
    return out


def stale_work(recipe: dict, cfgs: dict, runs: Path, benches: list, turns: int) -> list[str]:
    """Why finished work in `runs` is not what the recipe asks (one line each; [] if all is): a finished stage whose run
    has another config (`train.loop.run_conflict`), or an evaluation whose summary has another agent, benchmark, world,
    size, turn budget or compute dtype (the recipe's, resolved on this machine). Finished work is reused, not rerun, so
    a changed recipe must not reuse it silently."""
    from rag_lib.core import resolve_compute
    from rag_lib.train.loop import run_conflict
    dtype = resolve_compute(recipe['compute_dtype'])[0]
    out = []
    for s in recipe['stages']:
        d = runs / s['name']
        if (d / 'adapter' / 'adapter_config.json').exists() and (why := run_conflict(d, cfgs[s['name']].resolved(),
                                                                                        s['stage'])):
            out.append(f"stage {s['name']!r}: {why}")
    for label, bench, world, n in benches:
        for p in evaluated(recipe, label):
            f = runs / f'eval-{label}' / f'{p}.summary.json'
            if not f.exists(): continue
            got = json.loads(f.read_text())
            want = {'policy': p, 'agent': recipe['agent'], 'benchmark': bench, 'questions': n,
                    'world': world if bench == 'world' else None,     # a real sample's summary has no world
                    'max_turns': turns, 'compute_dtype': dtype}
            diff = [f'{k} {got.get(k)!r}, not {v!r}' for k, v in want.items() if got.get(k) != v]
            if diff: out.append(f"{f} was evaluated with {'; '.join(diff)}: delete it (it is evaluated again) or "
                                'use another --runs')
    return out


def copy_stage_files(record: Path, name: str, run: Path) -> None:
    "Copy stage `name`'s config, log and teacher counts from the `record` into its run folder `run`."
    run.mkdir(parents=True, exist_ok=True)
    for f in ('config.json', 'log.jsonl', 'teacher.json'):
        if (record / f'{name}.{f}').exists(): shutil.copyfile(record / f'{name}.{f}', run / f)


def keep_resume_point(run: Path, record: Path, name: str) -> str | None:
    """Keep the latest checkpoint of stage `name`'s run folder `run` in the `record` as `<name>-resume/` while the stage
    is in progress, and drop it once the stage is finished (its adapter written); what was done, or None."""
    from rag_lib.train.loop import latest_checkpoint
    dst = record / f'{name}-resume'
    if (run / 'adapter' / 'adapter_config.json').exists():
        if dst.exists(): shutil.rmtree(dst); return f'stage {name!r} finished: {dst} removed'
        return None
    if (ck := latest_checkpoint(run) if run.is_dir() else None) is None: return None
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(ck, dst)
    return f'stage {name!r} in progress: its checkpoint {ck.name} -> {dst}'


def seed_runs(recipe: dict, record: Path, runs: Path, benches: list) -> list[str]:
    """Fill `runs` from the committed `record` where it lacks the work (one line per item seeded): a stage the record
    holds the adapter of (`<name>-adapter/`, with `<name>.config.json`, its log and teacher counts) becomes a finished
    run, an evaluation the record holds becomes a finished evaluation, and the record's stage times are kept. A fresh
    clone then adds a stage or an evaluation without retraining the stages before it; `stale_work` still checks every
    seeded config and summary against the recipe. A stage in progress the record holds the resume point of
    (`<name>-resume/`, its latest checkpoint, with the stage's config and log) becomes a run that resumes from that
    checkpoint. A finished stage made longer (more steps) starts again from its init: the record keeps no checkpoint
    of finished stages."""
    from rag_lib.core import atomic_write_text
    out = []
    for s in recipe['stages']:
        n, d = s['name'], runs / s['name']
        src = record / f'{n}-adapter'
        resume = record / f'{n}-resume'
        if (d / 'adapter' / 'adapter_config.json').exists() or not (record / f'{n}.config.json').exists(): continue
        if (src / 'adapter_config.json').exists():
            copy_stage_files(record, n, d)
            shutil.copytree(src, d / 'adapter', dirs_exist_ok=True)
            out.append(f'stage {n!r}: {src} -> {d}')
        elif (resume / 'state.json').exists() and not (d / 'checkpoints').exists() and not (d / 'log.jsonl').exists():
            step = json.loads((resume / 'state.json').read_text())['step']
            copy_stage_files(record, n, d)
            shutil.copytree(resume, d / 'checkpoints' / f'step-{step:06d}')
            out.append(f'stage {n!r} in progress: {resume} (after step {step}) -> {d}, resumed from there')
    for label, *_ in benches:
        for p in evaluated(recipe, label):
            ev = runs / f'eval-{label}'
            got = [record / f'eval-{label}-{p}.{f}' for f in ('rows.jsonl', 'summary.json', 'trajectories.jsonl')]
            if (ev / f'{p}.summary.json').exists() or not all(f.exists() for f in got): continue
            ev.mkdir(parents=True, exist_ok=True)
            for f in got: shutil.copyfile(f, ev / f'{p}.{f.name.split(".", 1)[1]}')
            out.append(f'evaluation {p!r} on {label}: {record} -> {ev}')
    if (m := record / 'manifest.json').exists():
        times, kept = read_times(runs), json.loads(m.read_text()).get('stage_times', {})
        mine = {s['name'] for s in recipe['stages']} | {f'eval-{b[0]}-{p}' for b in benches
                                                         for p in evaluated(recipe, b[0])}
        if new := {k: v for k, v in kept.items() if k in mine and k not in times}:
            atomic_write_text(runs / 'stage_times.json', json.dumps({**times, **new}, indent=1))
            out.append(f'stage times of {sorted(new)}')
    return out


def eval_table(summaries: list[dict]) -> 'pd.DataFrame':
    "EM and F1 per policy and question group (always-yes and the rule policy once), from `run_eval` summaries."
    import pandas as pd
    seen, rows = set(), []
    for s in summaries:
        for r in s['by_group']:
            if (r['policy'], r['group']) in seen: continue
            seen.add((r['policy'], r['group']))
            rows.append({'policy': r['policy'], 'group': r['group'], 'n': r['n'], 'em': round(r['em'], 3),
                         'em_ci': f"[{r['em_low']:.3f}, {r['em_high']:.3f}]", 'f1': round(r['f1'], 3),
                         'f1_ci': f"[{r['f1_low']:.3f}, {r['f1_high']:.3f}]"})
    return pd.DataFrame(rows)


def paired_table(rows: dict[str, list[dict]], pairs: list[list[str]]) -> 'pd.DataFrame':
    "Per pair (a, b) and question group: the mean F1 of each and the paired difference a - b with its 95% interval."
    import pandas as pd
    from rag_lib.metrics import mean_ci
    out = []
    for a, b in pairs:
        if a not in rows or b not in rows: continue
        ra, rb = ({r['qid']: r for r in rows[p]} for p in (a, b))
        for g in GROUPS:
            q = sorted(k for k in ra if k in rb and (g == 'all' or ra[k]['group'] == g))
            if not q: continue
            m, lo, hi = mean_ci([ra[k]['f1'] - rb[k]['f1'] for k in q])
            out.append({'a': a, 'b': b, 'group': g, 'n': len(q), 'f1_a': round(sum(ra[k]['f1'] for k in q) / len(q), 3),
                        'f1_b': round(sum(rb[k]['f1'] for k in q) / len(q), 3), 'delta_f1': round(m, 3),
                        'delta_ci': f'[{lo:.3f}, {hi:.3f}]', 'only_a_right': sum(ra[k]['em'] > rb[k]['em'] for k in q),
                        'only_b_right': sum(rb[k]['em'] > ra[k]['em'] for k in q)})
    return pd.DataFrame(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('recipe', help='the recipe (JSON), e.g. configs/reference/grasp-smollm2.json')
    ap.add_argument('--runs', default='runs', help='folder of the stage runs (resumable)')
    ap.add_argument('--record', default=None, help="where the record goes (default: the recipe's 'record')")
    ap.add_argument('--questions', type=int, default=100, help='world questions evaluated (validation and test)')
    ap.add_argument('--real-questions', type=int, default=50, help='questions of each real sample evaluated (--test)')
    ap.add_argument('--test', action='store_true', help='also the test world and the real samples: once, at the end')
    ap.add_argument('--threads', type=int, default=None, help='torch threads of the evaluations')
    ap.add_argument('--from-record', action='store_true',
                    help="first seed --runs from the committed record where it lacks the work (adapters, configs, "
                         "logs, evaluations, times): a fresh clone adds a stage without retraining the ones before it")
    ap.add_argument('--only', nargs='*', default=None, help='run only these stages (the record is written anyway)')
    a = ap.parse_args(argv)
    try: recipe = read_recipe(Path(a.recipe))
    except ValueError as e:
        print(f'scripts/agent_reference.py: {e}', file=sys.stderr); return 2

    import pandas as pd
    from rag_lib.core import atomic_write_text, read_jsonl
    from rag_lib.pipeline import markdown_table
    from rag_lib.train import config_to_dict, run_eval, train_grpo, train_sft

    runs = Path(a.runs); runs.mkdir(parents=True, exist_ok=True)
    record = Path(a.record or recipe['record'])
    agent, turns = recipe['agent'], recipe['max_turns']
    cfgs = {s['name']: stage_config(recipe, s, runs) for s in recipe['stages']}
    benches = benchmarks(a.test, a.questions, a.real_questions)
    if a.from_record:
        for line in seed_runs(recipe, record, runs, benches): print(f'seeded from the record: {line}')
    if problems := stale_work(recipe, cfgs, runs, benches, turns):
        print('scripts/agent_reference.py: finished work differs from the recipe:\n  ' + '\n  '.join(problems),
              file=sys.stderr)
        return 2
    times = read_times(runs)
    # stage -> (work, the file a finished stage leaves)
    work = {s['name']: ((lambda s=s: (train_sft if s['stage'] == 'warm-start' else train_grpo)(cfgs[s['name']],
                                                                                              runs / s['name'])),
                        runs / s['name'] / 'adapter' / 'adapter_config.json') for s in recipe['stages']}
    for label, bench, world, n in benches:
        for p in evaluated(recipe, label):
            out = runs / f'eval-{label}'
            work[f'eval-{label}-{p}'] = (lambda out=out, p=p, bench=bench, world=world, n=n: run_eval(
                out, str(runs / p), p, n, turns, a.threads, world=world, agent=agent, benchmark=bench,
                compute_dtype=recipe['compute_dtype']),
                out / f'{p}.summary.json')
    for stage, (job, done) in work.items():
        if (a.only is not None and stage not in a.only) or done.exists(): continue
        timed_stage(runs, times, stage, job)

    # the record
    record.mkdir(parents=True, exist_ok=True)
    for p in recipe['evaluate']:
        if (runs / p / 'adapter').exists():
            shutil.rmtree(record / f'{p}-adapter', ignore_errors=True)
            shutil.copytree(runs / p / 'adapter', record / f'{p}-adapter')
    for s in recipe['stages']:
        # the checkpoint before the log: a log copied later holds at least the records the checkpoint sealed
        if said := keep_resume_point(runs / s['name'], record, s['name']): print(said)
        for f in ('config.json', 'log.jsonl', 'teacher.json'):
            if (runs / s['name'] / f).exists(): shutil.copyfile(runs / s['name'] / f, record / f"{s['name']}.{f}")
    for label, *_ in benches:
        ev, summaries, rows = runs / f'eval-{label}', [], {}
        for p in evaluated(recipe, label):
            if not (ev / f'{p}.summary.json').exists(): continue
            summaries.append(json.loads((ev / f'{p}.summary.json').read_text()))
            rows[p] = read_jsonl(ev / f'{p}.rows.jsonl')
            for f in ('rows.jsonl', 'summary.json', 'trajectories.jsonl'):
                shutil.copyfile(ev / f'{p}.{f}', record / f'eval-{label}-{p}.{f}')
        if not summaries: continue
        df = eval_table(summaries).sort_values(['group', 'policy'], kind='stable')
        df.to_csv(record / f'eval-{label}.csv', index=False)
        atomic_write_text(record / f'eval-{label}.md', markdown_table(df) + '\n')
        print(f'## {label}\n{markdown_table(df)}\n')
        pf = paired_table(rows, recipe.get('pairs', []))
        if len(pf):
            pf.to_csv(record / f'paired-{label}.csv', index=False)
            atomic_write_text(record / f'paired-{label}.md', markdown_table(pf) + '\n')
            print(f'## {label}, paired\n{markdown_table(pf)}\n')
    cmd = ' '.join(['python', 'scripts/agent_reference.py', *(sys.argv[1:] if argv is None else argv)])
    write_manifest(record, times, command=cmd, recipe=recipe, configs={n: config_to_dict(c) for n, c in cfgs.items()},
                   data={n: f'rag_lib.world.load_world(seed=s, n={c.world_questions}) for s in {list(c.train_worlds)}'
                         for n, c in cfgs.items()},
                   eval={label: f'rag_lib.train.heldout({bench!r}, n={n}, seed=42, world={world}); greedy, '
                                f'agent {agent!r}, max_turns={turns}' for label, bench, world, n in benches})
    print(f'record: {record.resolve()}')
    return 0


if __name__ == '__main__':
    sys.exit(main())

"""scripts/agent_reference.py: the committed recipes parse into the configs their runs were started with, a broken
recipe is refused with the field named, the paired table subtracts per question, and a committed record seeds a fresh
runs folder."""
import json, shutil, sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'scripts'))
import agent_reference as ar  # noqa: E402


def recipe(tmp_path, **kw) -> Path:
    r = {'record': 'x', 'agent': 'grasp', 'max_turns': 8, 'compute_dtype': 'float32',
         'stages': [{'name': 'warm', 'stage': 'warm-start', 'set': {'train_worlds': [1, 2], 'lr': 0.001}},
                    {'name': 'grpo', 'stage': 'grpo', 'init': 'warm', 'set': {'steps': 20, 'drop_flat_groups': True}}],
         'evaluate': ['warm', 'grpo'], 'pairs': [['grpo', 'warm']], **kw}
    (tmp_path / 'r.json').write_text(json.dumps(r))
    return tmp_path / 'r.json'


@pytest.mark.parametrize('path', sorted((ROOT / 'configs' / 'reference').glob('*.json')), ids=lambda p: p.name)
def test_committed_recipes_parse(path):
    r = ar.read_recipe(path)
    for s in r['stages']:
        cfg = ar.stage_config(r, s, Path('runs'))
        assert cfg.max_turns == int(s.get('set', {}).get('max_turns', r['max_turns']))


def test_stage_configs(tmp_path):
    r = ar.read_recipe(recipe(tmp_path))
    warm, grpo = (ar.stage_config(r, s, Path('runs')) for s in r['stages'])
    assert (warm.agent, warm.train_worlds, warm.lr) == ('grasp', (1, 2), 0.001)
    assert grpo.init_adapter == str(Path('runs') / 'warm' / 'adapter')
    assert (grpo.steps, grpo.drop_flat_groups) == (20, True)


def test_init_from_a_committed_adapter(tmp_path):
    stages = [{'name': 'w', 'stage': 'warm-start', 'init': 'artifacts/reference/a/warm-start-adapter'}]
    r = ar.read_recipe(recipe(tmp_path, stages=stages, evaluate=['w'], pairs=[]))
    assert ar.stage_config(r, r['stages'][0], Path('runs')).init_adapter == 'artifacts/reference/a/warm-start-adapter'


@pytest.mark.parametrize('change, words', [
    ({'evaluate': ['nope']}, "'nope' (evaluate/pairs) is not a stage"),
    ({'agent': 'react'}, "GRPO trains GRASP's agent"),
    ({'stages': [{'name': 'w', 'stage': 'warm-start', 'init': 'later'}]}, "init 'later' is neither"),
    ({'stages': [{'name': 'w', 'stage': 'sft'}]}, "stages[0] needs a 'name' and a 'stage'"),
    ({'evaluate': ['warm'], 'final': ['grpo']}, "final 'grpo' is not evaluated (['warm'])"),
])
def test_broken_recipes_are_refused(tmp_path, change, words):
    with pytest.raises(ValueError, match=words.replace('[', r'\[').replace('(', r'\(').replace(')', r'\)')):
        ar.read_recipe(recipe(tmp_path, **change))


def test_missing_field_is_named(tmp_path):
    p = recipe(tmp_path)
    r = json.loads(p.read_text()); del r['evaluate']; p.write_text(json.dumps(r))
    with pytest.raises(ValueError, match="field 'evaluate' is missing"):
        ar.read_recipe(p)


def test_final_policies_alone_meet_the_test_benchmarks(tmp_path):
    r = ar.read_recipe(recipe(tmp_path, final=['grpo']))
    assert [ar.evaluated(r, b[0]) for b in ar.benchmarks(True, 100, 50)[:3]] == [['warm', 'grpo'], ['grpo'], ['grpo']]


def test_without_final_every_evaluated_policy_meets_the_test_benchmarks(tmp_path):
    assert ar.evaluated(ar.read_recipe(recipe(tmp_path)), 'world-0') == ['warm', 'grpo']


def test_paired_table_subtracts_per_question():
    row = lambda q, g, f1: {'qid': q, 'group': g, 'f1': f1, 'em': f1}
    rows = {'a': [row('1', 'bridge', 1.0), row('2', 'bridge', 1.0), row('3', 'yes/no', 0.0)],
            'b': [row('1', 'bridge', 0.0), row('2', 'bridge', 1.0), row('3', 'yes/no', 1.0)]}
    t = ar.paired_table(rows, [['a', 'b']]).set_index('group')
    assert t.loc['bridge', 'delta_f1'] == 0.5
    assert t.loc['all', 'n'] == 3
    assert (t.loc['all', 'only_a_right'], t.loc['all', 'only_b_right']) == (1, 1)


@pytest.mark.parametrize('field, value, words', [
    ('max_turns', 4, 'max_turns 4, not 8'), ('compute_dtype', 'bfloat16', "compute_dtype 'bfloat16', not 'float32'")])
def test_an_evaluation_of_another_budget_is_not_reused(tmp_path, field, value, words):
    r = ar.read_recipe(recipe(tmp_path))
    cfgs = {s['name']: ar.stage_config(r, s, tmp_path) for s in r['stages']}
    ev = tmp_path / 'eval-world-9'; ev.mkdir()
    summary = {'policy': 'warm', 'agent': 'grasp', 'benchmark': 'world', 'world': 9, 'questions': 100, 'max_turns': 8,
               'compute_dtype': 'float32', field: value}
    (ev / 'warm.summary.json').write_text(json.dumps(summary))
    problems = ar.stale_work(r, cfgs, tmp_path, ar.benchmarks(False, 100, 50), 8)
    assert problems == [f"{ev / 'warm.summary.json'} was evaluated with {words}: delete it (it is evaluated again) or "
                        'use another --runs']



def test_a_real_sample_evaluation_is_reused(tmp_path):
    "A real sample's summary records no world (the evaluation writes None): finished, it is reused, not refused."
    r = ar.read_recipe(recipe(tmp_path))
    cfgs = {s['name']: ar.stage_config(r, s, tmp_path) for s in r['stages']}
    ev = tmp_path / 'eval-hotpotqa'; ev.mkdir()
    summary = {'policy': 'grpo', 'agent': 'grasp', 'benchmark': 'hotpotqa', 'world': None, 'questions': 50,
               'max_turns': 8, 'compute_dtype': 'float32'}
    (ev / 'grpo.summary.json').write_text(json.dumps(summary))
    assert ar.stale_work(r, cfgs, tmp_path, ar.benchmarks(True, 100, 50), 8) == []


def finished_stage(out: Path, cfg) -> None:
    "A stage run folder as a finished run of `cfg` leaves it: its config, a logged update, an adapter."
    from rag_lib.train.loop import start_run
    start_run(out, cfg.resolved(), 'warm-start')
    (out / 'log.jsonl').write_text('{"step": 0}\n')
    (out / 'adapter').mkdir(); (out / 'adapter' / 'adapter_config.json').write_text('{}')


def test_a_finished_stage_of_another_config_is_not_reused(tmp_path):
    r = ar.read_recipe(recipe(tmp_path))
    cfgs = {s['name']: ar.stage_config(r, s, tmp_path) for s in r['stages']}
    finished_stage(tmp_path / 'warm', ar.stage_config(r, {**r['stages'][0], 'set': {'lr': 0.01}}, tmp_path))
    problems = ar.stale_work(r, cfgs, tmp_path, ar.benchmarks(False, 100, 50), 8)
    assert len(problems) == 1 and problems[0].startswith("stage 'warm': ") and "'lr'" in problems[0]


def test_work_the_recipe_asks_for_is_reused(tmp_path):
    r = ar.read_recipe(recipe(tmp_path))
    cfgs = {s['name']: ar.stage_config(r, s, tmp_path) for s in r['stages']}
    finished_stage(tmp_path / 'warm', cfgs['warm'])
    assert ar.stale_work(r, cfgs, tmp_path, ar.benchmarks(False, 100, 50), 8) == []


def record_of(tmp_path, r, cfgs) -> Path:
    "A committed record as the script writes it, of a finished 'warm' stage and its evaluation on world 9."
    finished_stage(tmp_path / 'old' / 'warm', cfgs['warm'])
    rec = tmp_path / 'record'; rec.mkdir()
    shutil.copytree(tmp_path / 'old' / 'warm' / 'adapter', rec / 'warm-adapter')
    for f in ('config.json', 'log.jsonl'): shutil.copyfile(tmp_path / 'old' / 'warm' / f, rec / f'warm.{f}')
    summary = {'policy': 'warm', 'agent': 'grasp', 'benchmark': 'world', 'world': 9, 'questions': 100, 'max_turns': 8,
               'compute_dtype': 'float32'}
    (rec / 'eval-world-9-warm.summary.json').write_text(json.dumps(summary))
    for f in ('rows', 'trajectories'): (rec / f'eval-world-9-warm.{f}.jsonl').write_text('{}\n')
    (rec / 'manifest.json').write_text(json.dumps({'stage_times': {'warm': {'seconds': 5.0, 'sessions': []}}}))
    return rec


def test_a_record_seeds_a_fresh_runs_folder(tmp_path):
    r = ar.read_recipe(recipe(tmp_path))
    runs = tmp_path / 'runs'
    cfgs = {s['name']: ar.stage_config(r, s, runs) for s in r['stages']}
    seeded = ar.seed_runs(r, record_of(tmp_path, r, cfgs), runs, ar.benchmarks(False, 100, 50))
    assert len(seeded) == 3   # the warm stage, its evaluation, the stage times; grpo is not in the record
    assert (runs / 'warm' / 'adapter' / 'adapter_config.json').exists()
    assert (runs / 'eval-world-9' / 'warm.trajectories.jsonl').exists()
    assert ar.read_times(runs)['warm']['seconds'] == 5.0
    assert ar.stale_work(r, cfgs, runs, ar.benchmarks(False, 100, 50), 8) == []


def test_seeding_keeps_the_work_a_runs_folder_has(tmp_path):
    r = ar.read_recipe(recipe(tmp_path))
    runs = tmp_path / 'runs'
    cfgs = {s['name']: ar.stage_config(r, s, runs) for s in r['stages']}
    rec = record_of(tmp_path, r, cfgs)
    finished_stage(runs / 'warm', cfgs['warm'])
    (runs / 'warm' / 'log.jsonl').write_text('{"step": 0}\n{"step": 1}\n')
    seeded = ar.seed_runs(r, rec, runs, ar.benchmarks(False, 100, 50))
    assert not any(s.startswith("stage 'warm'") for s in seeded)
    assert (runs / 'warm' / 'log.jsonl').read_text().count('step') == 2


def test_timed_stage_keeps_another_process_times(tmp_path):
    "A stage finished by another process sharing `runs` while this one worked keeps its time."
    import stage_times as st
    mine = {}
    def other_process_finishes():
        st.timed_stage(tmp_path, {}, 'eval', lambda: None)
    st.timed_stage(tmp_path, mine, 'train', other_process_finishes)
    assert sorted(st.read_times(tmp_path)) == ['eval', 'train']


def in_progress(run: Path, steps: int) -> None:
    "A GRPO run folder with a config, a log and a checkpoint after each of `steps` steps."
    run.mkdir(parents=True)
    (run / 'config.json').write_text('{}')
    (run / 'log.jsonl').write_text(''.join(f'{{"step": {i}}}\n' for i in range(steps)))
    for i in range(1, steps + 1):
        (run / 'checkpoints' / f'step-{i:06d}').mkdir(parents=True)
        (run / 'checkpoints' / f'step-{i:06d}' / 'state.json').write_text(json.dumps({'step': i}))


def test_a_stage_in_progress_keeps_its_latest_checkpoint_in_the_record(tmp_path):
    in_progress(tmp_path / 'runs' / 'grpo', 3)
    ar.keep_resume_point(tmp_path / 'runs' / 'grpo', tmp_path / 'record', 'grpo')
    assert json.loads((tmp_path / 'record' / 'grpo-resume' / 'state.json').read_text())['step'] == 3


def test_a_finished_stage_drops_its_resume_point(tmp_path):
    in_progress(tmp_path / 'runs' / 'grpo', 2)
    ar.keep_resume_point(tmp_path / 'runs' / 'grpo', tmp_path / 'record', 'grpo')
    (tmp_path / 'runs' / 'grpo' / 'adapter').mkdir()
    (tmp_path / 'runs' / 'grpo' / 'adapter' / 'adapter_config.json').write_text('{}')
    ar.keep_resume_point(tmp_path / 'runs' / 'grpo', tmp_path / 'record', 'grpo')
    assert not (tmp_path / 'record' / 'grpo-resume').exists()


def test_a_resume_point_seeds_a_run_that_resumes_there(tmp_path):
    r = ar.read_recipe(recipe(tmp_path))
    rec = tmp_path / 'record'
    in_progress(tmp_path / 'old' / 'grpo', 2)
    ar.keep_resume_point(tmp_path / 'old' / 'grpo', rec, 'grpo')
    for f in ('config.json', 'log.jsonl'): shutil.copyfile(tmp_path / 'old' / 'grpo' / f, rec / f'grpo.{f}')
    ar.seed_runs(r, rec, tmp_path / 'runs', ar.benchmarks(False, 100, 50))
    from rag_lib.train.loop import latest_checkpoint
    assert latest_checkpoint(tmp_path / 'runs' / 'grpo').name == 'step-000002'

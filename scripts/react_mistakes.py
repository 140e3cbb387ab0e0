"""Where a ReAct policy's evaluation trajectories first leave the teacher's plan (`train.teacher.react_plan`: one search
per goal, in order, then the answer), counted by question group and right/wrong, with up to four examples of each
wrong kind. A search that names the wrong entity at a later hop is split by where the entity wanted and the entity
named stand in the previous observation: the wanted one in result [n] (or nowhere), the named one in that same result
(the wrong relation of the right paragraph), in another result, or shown nowhere.

    python scripts/react_mistakes.py runs/eval-world-9 react-v1 100 9   # folder, policy name, questions, world
"""
import re, sys
from collections import Counter
from rag_lib.agents import agent_key, load_trajectories
from rag_lib.train.evaluate import heldout
from rag_lib.train.teacher import teacher_plans, react_plan, react_results
from rag_lib.data import normalize_text
from rag_lib.core import read_jsonl
folder, name, n, world = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
qs, ret = heldout('world', n, world=world)
trajs = {t.qid: t for t in load_trajectories(f'{folder}/{name}.trajectories.jsonl')}
rows = {r['qid']: r for r in read_jsonl(f'{folder}/{name}.rows.jsonl')}
plans, _ = teacher_plans(ret, qs, 'react')
c, ex, hops = Counter(), {}, Counter()


def results(observation: str) -> list[str]:
    "The normalized text of each numbered result ('[n] Title: text') of an observation, in order."
    return [normalize_text(line) for _, line in react_results(observation)]


def where(entity: str, shown: list[str]) -> int | None:
    "The index of the first shown result that names `entity` (normalized), None if none does."
    return next((i for i, r in enumerate(shown) if entity and re.search(rf'\b{re.escape(entity)}\b', r)), None)

for q in qs:
    t, r = trajs[q.id], rows[q.id]
    p = plans.get(agent_key('react', q))
    right = r['em'] > 0
    if p is None: why = 'no plan'
    else:
        goals, answer, _ = react_plan(p)
        want = [normalize_text(g.query) for g in goals]
        did = [(s.action, normalize_text(s.argument or '')) for s in t.steps]
        why = 'follows'
        for i, w in enumerate(want + ['<answer>']):
            if i >= len(did): why = f'step {i}: out of turns'; break
            a, arg = did[i]
            if w == '<answer>':
                why = 'follows' if a == 'answer' else f'step {i}: {a} instead of answer'
                if a == 'answer' and not right: why = f'step {i}: wrong answer'
                break
            if a != 'search': why = f'step {i}: {a} instead of search (hop {i})'; break
            if arg != w:
                why = f'step {i}: search differs (hop {i})'
                if i:
                    shown = results(t.steps[i - 1].observation)
                    at, named = where(w, shown), where(arg, shown)
                    wanted = 'wanted ' + ('nowhere' if at is None else f'in [{at + 1}]')
                    got = 'named ' + ('nowhere' if named is None else 'in the same result' if named == at
                                      else 'in another result')
                    hops[(r['group'], 'right' if right else 'wrong', f'hop {i}', wanted, got)] += 1
                break
    k = (r['group'], 'right' if right else 'wrong', why)
    c[k] += 1; ex.setdefault(k, []).append((q, t, p))
for k, v in sorted(c.items(), key=str): print(k, v)
print('== later-hop searches that differ: where the entity wanted and the entity named stand')
for k, v in sorted(hops.items(), key=str): print('   ', k, v)
for k, xs in sorted(ex.items(), key=str):
    if k[1] == 'right': continue
    print('==', k)
    for q, t, p in xs[:4]:
        plan = [g.query for g in react_plan(p)[0]] if p else None
        print('   ', q.question, '| plan', plan, '| did', [(s.action, s.argument) for s in t.steps], '| gold', q.answer)

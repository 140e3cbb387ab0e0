"""Check that the current code reproduces the rerank swap record, and rename its files to the current addresses.

A change to a module an agent's content address hashes (`agents.fingerprint_modules`) gives every trajectory a new
address, so 06_rerank would rerun the whole record (about 5 h on 2 cores) even when the change cannot alter a
trajectory (a refactor). This script reruns a spread of the record's questions with the current code from an empty
trajectory cache, compares each trajectory with the record's of the same key in every field that decides it (hit
scores and `cached_tokens` aside: float32 rounding of the reranker's batches and KV-cache bookkeeping, both of which
vary with the questions run together), and prints each record file's current name. Only when every trajectory
matches may `--rename` `git mv` the files; then `python -m rag_lib.rerank evaluate --profile cpu` reads them all,
runs none and rewrites `index.json`. Say what was checked in the record's NOTES.md.

usage: RAG_LIB_CACHE=$(mktemp -d) python scripts/record_rekey.py [--questions 0 1 50 ...] [--rename]
"""
import argparse, dataclasses, json, os, subprocess, sys, time

from rag_lib.agents import cache_log, load_trajectories
from rag_lib.components import Study
from rag_lib.core import get_profile, profile_path, to_jsonable
from rag_lib.rerank.swaps import swap_agents, swap_outcomes, swap_profile, swap_setup


def deciding(t: dict) -> dict:
    "Trajectory `t` (JSON) without the fields that do not decide it: hit scores and `cached_tokens`."
    t = json.loads(json.dumps(t))
    for s in t['steps']:
        s.pop('cached_tokens', None)
        for h in s.get('hits') or []: h.pop('score', None)
    return t


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--profile', default='cpu')
    ap.add_argument('--questions', type=int, nargs='+', default=[0, 1, 50, 51, 100, 101, 148, 149],
                    help="indices of each dataset's questions to rerun (default: two from each batch of 50)")
    ap.add_argument('--rename', action='store_true', help='git mv the files to their current names if all match')
    a = ap.parse_args(argv)
    if not os.environ.get('RAG_LIB_CACHE'):
        ap.error('set RAG_LIB_CACHE to an empty folder: the rerun must not read old trajectories')
    prof = get_profile(a.profile)
    record = profile_path(prof.rerank_record)
    files = json.loads((record / 'index.json').read_text(encoding='utf-8'))['files']
    by_name = {(e['agent'], d): f for f, e in files.items() for d in e['datasets']}
    study = Study(swap_profile(prof))
    setup = swap_setup(study)
    sub = dataclasses.replace(setup, benches={d: dataclasses.replace(b, questions=[b.questions[i] for i in a.questions])
                                              for d, b in sorted(setup.benches.items())})
    names, n, equal, differ, worst = {}, 0, 0, [], 0.0
    for agent in ('react', 'grasp'):
        backend = study.backend_of(agent)
        t0 = time.time()
        swap_outcomes(agent, backend, prof, sub, questions=None, seeds=prof.rerank_llm_seeds, record=None)
        print(f'{agent}: rerun in {time.time() - t0:.0f} s', file=sys.stderr)
        for d in sub.benches:
            for name, (_, _, ag) in swap_agents(agent, backend, prof, sub.retrievals[d], sub.rerankers,
                                                prof.rerank_llm_seeds).items():
                old = by_name.get((name, d))
                if old is None:
                    raise SystemExit(f'{record / "index.json"}: no file of agent {name!r} on {d!r}: nothing to check')
                names[old] = cache_log(ag, backend).name
                rec = {t.key: to_jsonable(t) for t in load_trajectories(record / old, repair=False)}
                for t in load_trajectories(cache_log(ag, backend)):
                    mine, theirs = to_jsonable(t), rec.get(t.key)
                    n += 1
                    if theirs is not None and deciding(mine) == deciding(theirs):
                        equal += 1
                        for x, y in zip(mine['steps'], theirs['steps']):
                            for h, g in zip(x.get('hits') or [], y.get('hits') or []):
                                worst = max(worst, abs(h['score'] - g['score']))
                    else: differ.append(t.key)
    moved = {o: m for o, m in sorted(names.items()) if o != m}
    print(json.dumps({'questions': a.questions, 'trajectories': n, 'equal': equal, 'differ': differ,
                      'largest_hit_score_difference': worst, 'files': len(names), 'to_rename': moved}, indent=1))
    if differ: print('the current code does not reproduce the record: remake it, do not rename', file=sys.stderr)
    if a.rename and not differ:
        for o, m in moved.items(): subprocess.run(['git', 'mv', str(record / o), str(record / m)], check=True)
        print(f'renamed {len(moved)} files; now run: python -m rag_lib.rerank evaluate --profile {a.profile}',
              file=sys.stderr)
    return 1 if differ else 0


if __name__ == '__main__':
    sys.exit(main())

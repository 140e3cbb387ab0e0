"""Which-first comparisons of a policy's evaluation: does the last thought state both compared years, and does the
answer name the entity of the earlier of the two years it stated? Separates a failed comparison from a failed
reading (a wrong answer that agrees with its own, misread, years).

    python scripts/comparison_check.py artifacts/reference/grasp-smollm2-v4 eval-world-9-grpo

(folder, and the prefix of `<prefix>.rows.jsonl` and `<prefix>.trajectories.jsonl` in it.) Prints one line per
comparison (right or wrong, the last output) and the counts.
"""
import re, sys
from pathlib import Path

from rag_lib.agents import load_trajectories
from rag_lib.core import read_jsonl
from rag_lib.data import normalize_text

YEAR = re.compile(r'(?:The [a-z ]+ of )?(\S.+?) (?:is|was) (\d{4})\.')


def stated_years(output: str) -> list[tuple[str, int]]:
    "The (entity, year) pairs the thought of `output` states, in order ('The year of X is 1836.')."
    thought = output.split('\nAction:')[0].removeprefix('Thought: ')
    return [(e, int(y)) for e, y in YEAR.findall(thought)]


def names(answer: str, entity: str) -> bool:
    "Whether `answer` names `entity` (normalized; either contains the other, for titles cut short)."
    a, e = normalize_text(answer), normalize_text(entity)
    return bool(a) and (a in e or e in a)


def main(folder: str, prefix: str) -> None:
    rows = {r['qid']: r for r in read_jsonl(Path(folder) / f'{prefix}.rows.jsonl')}
    n = two = agrees = right = agrees_right = 0
    for t in sorted(load_trajectories(Path(folder) / f'{prefix}.trajectories.jsonl'), key=lambda t: t.qid):
        if rows[t.qid]['group'] != 'comparison': continue
        out = t.steps[-1].output if t.steps else ''
        ys = stated_years(out)[:2]
        ok = rows[t.qid]['em'] > 0
        agree = len(ys) == 2 and ys[0][1] != ys[1][1] and names(t.answer or '', min(ys, key=lambda x: x[1])[0])
        n, two, agrees = n + 1, two + (len(ys) == 2), agrees + agree
        right, agrees_right = right + ok, agrees_right + (agree and ok)
        print(f"{'right' if ok else 'wrong'} | {t.question} | {out.replace(chr(10), ' | ')}")
    print(f'{prefix}: {n} which-first comparisons, {right} right; the last thought states two years in {two}; the '
          f'answer names the earlier of its own two (different) years in {agrees} ({agrees_right} of them right)')


if __name__ == '__main__':
    main(*sys.argv[1:3])

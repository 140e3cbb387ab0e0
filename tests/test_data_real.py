"""Load the real benchmark samples in ../shared/data and check them against the counts in its SOURCES.md."""
import warnings
from collections import Counter

import pytest

from rag_lib.core import data_dir
from rag_lib.data import load, load_with_report, sample_stratified, sample_uniform, split_sentences

D = data_dir()
if not (D / 'SOURCES.md').exists():
    pytest.skip(f'../shared/data not found: {D} (set RAG_LIB_DATA to the folder of SOURCES.md)', allow_module_level=True)

HOTPOT = 'hotpotqa/hotpot_dev_distractor_1267.json'
WIKI = '2wikimultihopqa/2wiki_dev_657.json'
MUSIQUE = 'musique/musique_ans_v1.0_dev_292.jsonl'
WIKIHOP = '2wikimultihopqa/AdelWang__MIGRES/wikihop.json'
IRCOT = 'hotpotqa/xindili-cmu__anlp-project-multihop/dev_subsampled.jsonl'

RAW = {  # file: (dataset, questions, layout); the canonical files were derived from these
    'hotpotqa/megagonlabs__RPT/dev.jsonl': ('hotpotqa', 300, 'jsonl'),
    'hotpotqa/megagonlabs__RPT/test.jsonl': ('hotpotqa', 500, 'jsonl'),
    'hotpotqa/megagonlabs__RPT/train.jsonl': ('hotpotqa', 300, 'jsonl'),
    'hotpotqa/AdelWang__MIGRES/hotpot.json': ('hotpotqa', 200, 'jsonl'),  # JSONL saved as .json
    '2wikimultihopqa/saptarshi059__TTS-project/sampled_ds.json': ('2wikimultihopqa', 500, 'columns'),
    'musique/AdelWang__MIGRES/musique.json': ('musique', 200, 'jsonl'),
    'musique/OpenSPG__KAG/musique_qa_100.json': ('musique', 100, 'json'),
    IRCOT: ('hotpotqa', 500, 'jsonl'),
}
CANONICAL = {HOTPOT: 'hotpotqa', WIKI: '2wikimultihopqa', MUSIQUE: 'musique'}

_cache = {}
def _load(f, **kw):
    "Questions of data file `f` (cached; warnings from skip mode are silenced here and tested below)."
    key = (f, tuple(sorted(kw.items())))
    if key not in _cache:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            _cache[key] = load_with_report(D / f, **kw)
    return _cache[key]


def test_canonical_hotpotqa():
    qs = load(D / HOTPOT)
    assert len(qs) == 1267 and len({q.id for q in qs}) == 1267
    assert Counter(q.type for q in qs) == {'bridge': 971, 'comparison': 296}
    assert {q.level for q in qs} == {'hard'} and {q.dataset for q in qs} == {'hotpotqa'}
    assert sum(len(q.paragraphs) == 10 for q in qs) == 1260
    exact = {(p.title, tuple(p.sentences)) for q in qs for p in q.paragraphs}
    assert len(exact) == 12392 and sum(len(s) for _, s in exact) == 50696   # SOURCES.md's counts
    # pids fold whitespace: two paragraphs that differ only in spacing (Tchaikovsky, Harry Morgan) merge
    corpus = {p.pid: p for q in qs for p in q.paragraphs}
    assert len(corpus) == 12390
    assert all(all(isinstance(k, int) for _, k in q.supporting) and len(q.gold_titles) >= 2 for q in qs)


def test_canonical_2wiki():
    qs = load(D / WIKI)
    assert len(qs) == 657 and {q.dataset for q in qs} == {'2wikimultihopqa'} and {q.level for q in qs} == {''}
    assert Counter(q.type for q in qs) == {'compositional': 256, 'bridge_comparison': 172, 'comparison': 155, 'inference': 74}
    assert all(len(q.paragraphs) == 10 for q in qs)


def test_canonical_musique():
    qs = load(D / MUSIQUE)
    assert len(qs) == 292 and all(len(q.paragraphs) == 20 for q in qs)
    assert Counter(q.type for q in qs) == {'2hop': 192, '3hop1': 55, '3hop2': 9, '4hop1': 28, '4hop2': 2, '4hop3': 6}
    assert all(len(q.gold_pids) == len(q.supporting) == int(q.level) for q in qs)  # one supporting paragraph per hop
    assert all(s is None for q in qs for _, s in q.supporting)
    assert all(q.paragraphs[0].sentences for q in qs)


@pytest.mark.parametrize('f', list(RAW))
def test_raw_variant_loads(f):
    dataset, n, layout = RAW[f]
    qs, rep = _load(f)
    assert (len(qs), rep.layout, rep.dataset) == (n, layout, dataset) and not rep.skipped and not rep.duplicates
    assert {q.dataset for q in qs} == {dataset}


@pytest.mark.parametrize('f', [*CANONICAL, *RAW])
def test_supporting_titles_are_candidates(f):
    for q in _load(f)[0]:
        titles, pids = {p.title for p in q.paragraphs}, {p.pid for p in q.paragraphs}
        assert q.gold_titles and set(q.gold_titles) <= titles and set(q.gold_pids) <= pids, q.id
        assert {t for t, _ in q.supporting} == set(q.gold_titles), q.id


@pytest.mark.parametrize('canonical', list(CANONICAL))
def test_raw_layouts_agree_with_canonical(canonical):
    "The canonical files re-serialize the raw ones: every layout must give the very same `Question`."
    by_id = {q.id: q for q in _load(canonical)[0]}
    raws = [f for f in RAW if RAW[f][0] == CANONICAL[canonical] and f != IRCOT]
    if canonical == WIKI: raws.append(WIKIHOP)
    seen = set()
    for f in raws:
        for q in _load(f, on_error='skip')[0]:
            assert q == by_id[q.id], (f, q.id)
            seen.add(q.id)
    assert seen == set(by_id)  # and together they are all of it


def test_ircot_paragraph_level_support():
    qs = _load(IRCOT)[0]
    assert all(len(q.gold_pids) == 2 and all(s is None for _, s in q.supporting) for q in qs)
    assert sum(len(q.paragraphs) == 10 for q in qs) == 489 and {q.type for q in qs} == {''}
    canon = {q.id: q for q in _load(HOTPOT)[0]}
    shared = [q for q in qs if q.id in canon]
    assert len(shared) == 90 and all(set(q.gold_titles) == set(canon[q.id].gold_titles) for q in shared)


def test_migres_wikihop_skip_and_raise():
    with pytest.warns(UserWarning, match='skipped 36'):
        qs, rep = load_with_report(D / WIKIHOP, on_error='skip')
    assert (len(qs), rep.n_records, len(rep.skipped)) == (164, 200, 36)
    assert all(s.id and s.line == s.index + 1 and s.reason == "field 'context': missing" for s in rep.skipped)
    assert not {s.id for s in rep.skipped} & {q.id for q in qs}
    first = rep.skipped[0]
    with pytest.raises(ValueError) as e:
        load(D / WIKIHOP)
    msg = str(e.value)
    assert 'wikihop.json' in msg and f'record {first.index} (line {first.line})' in msg and first.id in msg and "'context'" in msg


def test_samples_are_reproducible():
    qs = _load(HOTPOT)[0]
    s = sample_stratified(qs, 1000)
    assert len(s) == 1000 and Counter(q.type for q in s) == {'bridge': 766, 'comparison': 234}  # 766.4, 233.6
    assert [q.id for q in s] == [q.id for q in sample_stratified(list(reversed(qs)), 1000)]
    u = sample_uniform(qs, 500)
    assert len({q.id for q in u}) == 500 and [q.id for q in u] == [q.id for q in sample_uniform(_load(HOTPOT)[0], 500)]


def test_split_sentences_on_hotpot_paragraphs():
    "Re-splitting HotpotQA's joined sentences mostly recovers its own boundaries (agreement is reported, not required exact)."
    corpus = {p.pid: p for q in _load(HOTPOT)[0] for p in q.paragraphs}.values()
    same = sum(split_sentences(p.text) == [s.strip() for s in p.sentences if s.strip()] for p in corpus)
    assert same / len(corpus) > 0.9, same / len(corpus)  # 0.94 at the time of writing

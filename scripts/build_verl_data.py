#!/usr/bin/env python
"""Build the data of a verl GRASP run: tool indexes, train.parquet, val.parquet, tools.yaml, manifest.json.

Examples (see docs/scale.md):
  # the paper's run: HotpotQA train (distractor) from the hub, the three dev samples for validation
  python scripts/build_verl_data.py --out data/verl --train hotpotqa/hotpot_qa --train-config distractor \
      --n-train 17280 --val-data ../shared/data --n-val 500 --embed Qwen/Qwen3-Embedding-0.6B --device cuda
  # offline, anywhere: the generated world (the GPU smoke run uses this)
  python scripts/build_verl_data.py --out data/verl-world --train world --n-train 64 --val-datasets world --n-val 8
"""
import argparse, json, sys, time
from pathlib import Path


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--out', required=True, help='output folder (train.parquet, val.parquet, tools.yaml, index/, manifest.json)')
    p.add_argument('--train', default='hotpotqa/hotpot_qa', help="'world', a local file rag_lib.data.load reads, or a hub id")
    p.add_argument('--train-config', default='distractor', help='hub dataset config (HotpotQA: distractor)')
    p.add_argument('--train-split', default='train')
    p.add_argument('--n-train', type=int, default=17280, help='training questions (GRASP: 270 steps x 64 = 17,280 prompts)')
    p.add_argument('--val-datasets', nargs='+', default=['hotpotqa', '2wikimultihopqa', 'musique'],
                   help="validation benchmarks: 'world' and/or keys of rag_lib.corpus.REAL_FILES")
    p.add_argument('--val-data', default=None, help='folder with the dev files of REAL_FILES (default: rag_lib.core.data_dir())')
    p.add_argument('--n-val', type=int, default=500, help='validation questions per benchmark (GRASP: 500 at seed 42)')
    p.add_argument('--val-corpus', default='split', choices=('split', 'sample'), help="'split': corpus of the whole dev split (as the paper)")
    p.add_argument('--seed', type=int, default=42)
    p.add_argument('--embed', default='minilm', help="embedding model of the indexes (GRASP: Qwen/Qwen3-Embedding-0.6B; 'minilm' is offline)")
    p.add_argument('--device', default=None, help='where the corpus is encoded now (cuda on a GPU machine)')
    p.add_argument('--tools-device', default='cpu', help="where the tools embed queries during training (verl's agent-loop workers: cpu)")
    p.add_argument('--ablation', default='none', choices=('none', 'no-semantic', 'no-keyword', 'no-read'), help='GRASP ablation: drop one tool')
    p.add_argument('--max-turns', type=int, default=10, help='T (must equal rollout.multi_turn.max_assistant_turns)')
    a = p.parse_args(argv)

    from rag_lib.agents import GRASP_TOOLS, GraspConfig
    from rag_lib.corpus import load_benchmark
    from rag_lib.data import load, sample_uniform
    from rag_lib.retrieval import Embedder
    from rag_lib.verl_integration import build_verl_data

    drop = {'none': None, 'no-semantic': 'semantic_search', 'no-keyword': 'keyword_search', 'no-read': 'read_chunk'}[a.ablation]
    cfg = GraspConfig(tool_format='hermes', max_turns=a.max_turns, tools=tuple(t for t in GRASP_TOOLS if t != drop))
    t0 = time.time()
    if a.train == 'world':
        from rag_lib.world import load_world
        train = load_world(n=max(a.n_train, 300))[:a.n_train]
    else:
        hub = not Path(a.train).exists()
        train = load(a.train, 'hotpotqa' if hub else None, config=a.train_config if hub else None, split=a.train_split if hub else None)
        train = sample_uniform(train, a.n_train, a.seed)
    val = []
    for name in a.val_datasets:
        b = load_benchmark(name, a.n_val, a.seed, a.val_corpus, data=a.val_data)
        if b is None: print(f'{name}: dev file not found under {a.val_data or "data_dir()"}; not in the validation set', file=sys.stderr)
        else: val.append(b)
    print(f'{len(train)} training questions, validation: {[(b.name, len(b.questions), len(b.corpus)) for b in val]} ({time.time() - t0:.0f} s)')
    m = build_verl_data(a.out, train, val, cfg, Embedder(a.embed, device=a.device), device=a.tools_device)
    print(json.dumps(m, indent=1))
    print(f'done in {time.time() - t0:.0f} s')


if __name__ == '__main__':
    main()

#!/usr/bin/env python
"""Run rag_lib agents through vLLM on a few questions and write their trajectories and metrics.

  python scripts/vllm_agents.py --model /models/qwen2.5-0.5b-instruct --questions 4 --out outputs/vllm_agents
  # a verl-trained GRASP checkpoint (merged to Hugging Face format), evaluated with the prompt and tools it was trained with:
  python scripts/vllm_agents.py --model outputs/verl/merged/step_270 --agents grasp-hermes --dataset hotpotqa --questions 500

Agents: react (the bridge study's agent), grasp (GRASP, ReAct-style text), grasp-hermes (GRASP in verl's tool-call format).
"""
import argparse, json, time
from pathlib import Path


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--model', required=True, help='a local model folder (or a hub id in the local cache)')
    p.add_argument('--agents', nargs='+', default=['react', 'grasp-hermes'], choices=('react', 'grasp', 'grasp-hermes'))
    p.add_argument('--dataset', default='world', help="'world' or a key of rag_lib.corpus.REAL_FILES")
    p.add_argument('--data', default=None, help='folder of the dev files (default: rag_lib.core.data_dir())')
    p.add_argument('--questions', type=int, default=4)
    p.add_argument('--seed', type=int, default=42)
    p.add_argument('--embed', default='minilm')
    p.add_argument('--tensor-parallel-size', type=int, default=1)
    p.add_argument('--gpu-memory-utilization', type=float, default=0.5)
    p.add_argument('--max-model-len', type=int, default=16384)
    p.add_argument('--out', required=True)
    a = p.parse_args(argv)

    from rag_lib.agents import GraspAgent, GraspConfig, ReActAgent, ReActConfig, Runner
    from rag_lib.core import to_jsonable, write_jsonl
    from rag_lib.corpus import load_benchmark
    from rag_lib.llm import VLLMBackend
    from rag_lib.metrics import trajectory_metrics
    from rag_lib.retrieval import Retrieval

    out = Path(a.out); out.mkdir(parents=True, exist_ok=True)
    b = load_benchmark(a.dataset, a.questions, a.seed, 'sample', data=a.data)
    if b is None: raise SystemExit(f'{a.dataset}: dev file not found')
    t0 = time.time()
    llm = VLLMBackend(a.model, tensor_parallel_size=a.tensor_parallel_size, gpu_memory_utilization=a.gpu_memory_utilization,
                      max_model_len=a.max_model_len)
    ret = Retrieval(b.corpus, a.embed)
    build = {'react': lambda: ReActAgent(llm, ret, ReActConfig()),
             'grasp': lambda: GraspAgent(llm, ret, GraspConfig(), name='grasp'),
             'grasp-hermes': lambda: GraspAgent(llm, ret, GraspConfig(tool_format='hermes'), name='grasp-hermes')}
    agents = [build[n]() for n in a.agents]
    trajs = Runner(agents, llm, progress=False).run(b.questions)
    qs = {q.id: q for q in b.questions}
    rows = [trajectory_metrics(t, qs[t.qid], b.corpus) for t in trajs]
    write_jsonl(out / 'trajectories.jsonl', (to_jsonable(t) for t in trajs))
    write_jsonl(out / 'metrics.jsonl', rows)
    summary = {}
    for n in a.agents:
        r = [x for x in rows if x['agent'] == n]
        summary[n] = {k: sum(float(x[k]) for x in r) / len(r) for k in ('em', 'f1', 'turns', 'parse_failures', 'answered')}
    summary['seconds'] = round(time.time() - t0, 1)
    summary['model'], summary['fingerprint'], summary['stats'] = a.model, llm.fingerprint, llm.stats
    (out / 'summary.json').write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary, indent=1))


if __name__ == '__main__':
    main()

"""Benchmark: the lockstep runner against one model call per step.

The same 16 questions of the generated world go through the bridge study's ReAct agent twice,
in one process, with the CPU default model (SmolLM2-135M-Instruct):

- reference: one request per call, the whole context prefilled at every step
  (`TransformersBackend(reuse_cache=False)`, `Runner(max_live=1)`), as a plain
  "call the model for each agent step" loop does;
- rag_lib: the lockstep runner (`Runner(max_live=16)`, one batched call per round) over a
  backend that keeps each trajectory's KV cache across steps and shares the system prompt's.

It prints the wall-clock speedup, the share of trajectories that came out identical (same
output tokens at every step; cached and recomputed attention can differ in the last bits and
flip a near-tie), and the backends' prefill and decode throughput. Being a ratio within one
process, the speedup does not depend on the machine's absolute speed.
Target: speedup >= 3 with identical >= 0.95.  Run: `python benchmarks/runner.py [--questions 16]`.
"""
import argparse, sys, time

from rag_lib.agents import ReActAgent, ReActConfig, Runner
from rag_lib.corpus import Corpus
from rag_lib.llm import TransformersBackend
from rag_lib.retrieval import Retrieval
from rag_lib.world import load_world


def run(backend, agent_cfg, retrieval, questions, max_live):
    "Trajectories of `questions` and the seconds they took."
    agent = ReActAgent(backend, retrieval, agent_cfg)
    t0 = time.perf_counter()
    trajs = Runner(agent, backend, max_live=max_live, progress=True).run(questions)
    return trajs, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--questions', type=int, default=16)
    ap.add_argument('--max-turns', type=int, default=4)
    a = ap.parse_args()

    world = load_world()
    questions = world[:a.questions]
    retrieval = Retrieval(Corpus.from_questions(world, 'world'))
    retrieval.reranked('paragraph')                      # build indexes before timing
    cfg = ReActConfig(max_turns=a.max_turns)              # the paper's tool: BM25 top-50 reranked, top-10 shown

    ref_backend = TransformersBackend('smollm2', reuse_cache=False, max_batch=1)
    ref, ref_s = run(ref_backend, cfg, retrieval, questions, max_live=1)
    fast_backend = TransformersBackend('smollm2', reuse_cache=True, max_batch=16)
    fast, fast_s = run(fast_backend, cfg, retrieval, questions, max_live=16)

    same = [all(x.output_ids == y.output_ids for x, y in zip(r.steps, f.steps)) and len(r.steps) == len(f.steps)
            for r, f in zip(ref, fast)]
    gen = lambda trajs: sum(len(s.output_ids) for t in trajs for s in t.steps)
    st = fast_backend.stats
    prefill_tok_s = st['prefilled'] / st['prefill_s']
    decode_tok_s = gen(fast) / st['decode_s']
    ref_prefill = ref_backend.stats['prefilled']
    print(f'reference: {ref_s:.1f} s, {ref_prefill} tokens prefilled, {gen(ref)} generated, one request per call')
    print(f'rag_lib:   {fast_s:.1f} s, {st["prefilled"]} tokens prefilled ({st["cached"]} reused from caches), '
          f'{gen(fast)} generated, {sum(len(t.steps) for t in fast)} steps')
    speedup, identical = ref_s / fast_s, sum(same) / len(same)
    print(f'docs={len(retrieval.corpus)} questions={len(questions)} steps={sum(len(t.steps) for t in fast)} '
          f'ref_s={ref_s:.1f} runner_s={fast_s:.1f} ref_prefilled={ref_prefill} runner_prefilled={st["prefilled"]} '
          f'prefill_tok_s={prefill_tok_s:.0f} decode_tok_s={decode_tok_s:.0f} '
          f'speedup={speedup:.2f} identical={identical:.3f}')
    ok = speedup >= 3 and identical >= 0.95
    if not ok: print('target missed: speedup >= 3 and identical >= 0.95', file=sys.stderr)
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())

"""Benchmark: bf16 linear layers on the CPU's matrix units against float32, in one process.

What it measures, with the CPU default model (SmolLM2-135M-Instruct), each part once in float32 and once in
`auto` (what `compute_dtype: auto` resolves to on this machine, `core.resolve_compute`):

- the machine: `amx` (1 if the CPU reports `amx_bf16`), `bf16_support`, and `peak_bf16_gflops` /
  `peak_fp32_gflops`, a 2048^3 matmul timed in this process (best of 3); the bf16 crossover row count measured here
  (`probe_min_rows`, `core.probe_speedups` at SmolLM2's MLP shape; `none`: bf16 never wins) beside the one `auto`
  takes, recorded per instruction set in `core.AUTO_COMPUTE` (`auto_min_rows`): a run never measures it, so a
  lasting disagreement on a quiet machine is a reason to change the table;
- prefill: prompts of 512 tokens, one at a time (as the runner prefills), tokens/s (`prefill_speedup`), and the
  linear layers' achieved GFLOP/s in `auto` prefill (their multiply-adds over the whole prefill time, attention
  included, so a lower bound) as a share of `peak_bf16_gflops` (`prefill_peak_share`; of `peak_fp32_gflops` where
  `auto` is float32);
- batched decode: 32 sequences decoded together, generated tokens/s (`decode_speedup`; best of 3 passes); and
  `auto` again with the float32 output head in place of `llm.compute.GreedyHead` (bf16 logits, float32's argmax
  found exactly from them; the same tokens), whose gain is `greedy_head_speedup`;
- training: one SFT micro-batch (4 sequences of 512 tokens, LoRA rank 8 on the top 8 blocks, loss on the second
  half of each) forward and backward, tokens/s (`train_speedup`; best of 3); and `auto` again with the output head's
  backward in float32 (a plain `Linear` head in place of `llm.compute.mixed_head_class`'s, whose gradient of the
  hidden states is bf16; the logits are float32 either way), whose gain is `head_grad_speedup`; and the forward and
  backward of the micro-batch's 1,024 token log-probs over the 49,152-token vocabulary alone, with autograd of
  `gather - logsumexp` and with `grpo.target_logprobs` (the same gradient from one tensor): `logprob_speedup`;
- agreement: the runner benchmark's trajectories (16 world questions, the ReAct agent, 4 turns, lockstep runner)
  in both: `greedy_token_agreement` (the share of float32's generated tokens that `auto` reproduces before the two
  trajectories first differ), `answer_agreement` (same final answer) and the answers' F1 in both (`f1_float32`,
  `f1_auto`).

Targets on a CPU with AMX: prefill_speedup >= 2.5, decode_speedup >= 1.8, train_speedup >= 2.0,
answer_agreement >= 0.9 (aim: prefill_peak_share >= 0.3). Without bf16 matrix instructions `auto` is float32 and
there is nothing to compare: it prints the machine's line and says the targets are skipped. `--compute bfloat16`
measures bf16 in place of `auto` even there (emulated by torch, so slow: useful for the agreement numbers only).
The last line is key=value pairs.

    python benchmarks/compute.py [--compute auto|bfloat16] [--bf16-min-rows N] [--questions 16] [--threads N]
"""
import argparse, sys, time

import torch

from rag_lib.agents import ReActAgent, ReActConfig, Runner
from rag_lib.core import bf16_support, resolve_compute, set_threads
from rag_lib.core.compute import min_bf16_rows, probe_speedups
from rag_lib.corpus import Corpus
from rag_lib.grpo import target_logprobs, token_logprobs
from rag_lib.llm import Request, TransformersBackend
from rag_lib.metrics import f1_score, normalize_answer
from rag_lib.retrieval import Retrieval
from rag_lib.train import load_policy, logit_rows, micro_batches
from rag_lib.world import load_world


def best_of(f, reps=3):
    "The fastest of `reps` timed calls of `f` (after one warm-up call)."
    f()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter(); f(); times.append(time.perf_counter() - t0)
    return min(times)


def peak_gflops(dtype, n=2048):
    "GFLOP/s of an n x n x n matmul in `dtype`."
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(n, n, generator=g).to(dtype), torch.randn(n, n, generator=g).to(dtype)
    return 2 * n ** 3 / best_of(lambda: a @ b) / 1e9


def linear_macs_per_token(model) -> int:
    "Multiply-adds of the decoder's linear layers per token (the output head excluded: prefill keeps one row)."
    head = model.get_output_embeddings()
    return sum(m.in_features * m.out_features for m in model.modules()
               if isinstance(m, torch.nn.Linear) and m is not head)


def prompts(backend, world, n, length):
    "`n` token sequences of `length` tokens cut from the world's paragraphs."
    text = ' '.join(s for q in world for p in q.paragraphs for s in p.sentences)
    ids = backend.encode(text)
    return [ids[i * length:(i + 1) * length] for i in range(n)]


def prefill(backend, seqs):
    "Prefill tokens/s over `seqs`, one request at a time, no cache reuse (best of 3 passes)."
    def go():
        backend.clear_cache()
        backend.generate([Request(list(s), 1) for s in seqs])
    t = best_of(go)
    return sum(len(s) for s in seqs) / t, t


def decode(backend, seqs, new=32, reps=3):
    "Generated tokens/s of all `seqs` decoded in one batch (the decode loop's time only; best of `reps` passes)."
    def go():
        backend.clear_cache()
        backend.stats.update(decoded=0, decode_s=0.0)
        backend.generate([Request(list(s), new) for s in seqs])
        return backend.stats['decoded'] / backend.stats['decode_s']
    go()   # warm-up
    return max(go() for _ in range(reps))


def decode_float32_head(backend, seqs):
    "`decode` with the backend's greedy steps reading the float32 output head (no `GreedyHead`)."
    head, backend.greedy_head = backend.greedy_head, None
    try: return decode(backend, seqs)
    finally: backend.greedy_head = head


def train_step(compute, min_rows, rows, length=512, lora_layers=8, float32_head=False):
    """Forward+backward tokens/s of one SFT micro-batch (`rows` x `length` tokens, loss on each second half; best of
    3); `float32_head`: the output head a plain float32 `Linear`, its backward too."""
    policy = load_policy('smollm2', lora_rank=8, lora_layers=lora_layers, compute_dtype=compute, bf16_min_rows=min_rows)
    if float32_head: policy.lm.get_output_embeddings().__class__ = torch.nn.Linear
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, 49152, (rows, length), generator=g).tolist()
    mask = [[0] * (length // 2) + [1] * (length - length // 2) for _ in range(rows)]
    mb = micro_batches(list(zip(ids, mask)), rows, 0)[0]
    def go():
        policy.module.zero_grad(set_to_none=True)
        lp = token_logprobs(logit_rows(policy.lm, mb), mb.input_ids, mb.loss_mask)
        (-lp.sum() / mb.num_tokens).backward()
    return rows * length / best_of(go, reps=3)


def logprob_step(fused, rows=1024, vocab=49152):
    """Seconds of the forward and backward of `rows` token log-probs over `vocab` logits (best of 3): `fused`,
    `grpo.target_logprobs`; else autograd of the formula it replaces, `z.gather(-1, ids) - logsumexp(z)`."""
    g = torch.Generator().manual_seed(0)
    z0, ids = torch.randn(rows, vocab, generator=g) * 4, torch.randint(0, vocab, (rows,), generator=g)
    w = torch.randn(rows, generator=g)
    def go():
        z = z0.clone().requires_grad_()
        lp = target_logprobs(z, ids) if fused else z.gather(-1, ids[:, None]).squeeze(-1) - torch.logsumexp(z, -1)
        (lp * w).sum().backward()
    return best_of(go)


def trajectories(backend, retrieval, questions, max_turns):
    "The runner benchmark's trajectories: the ReAct agent, lockstep, all questions live at once."
    agent = ReActAgent(backend, retrieval, ReActConfig(max_turns=max_turns))
    return Runner(agent, backend, max_live=len(questions), progress=True).run(questions)


def agreement(ref, new, questions):
    "(greedy token agreement, answer agreement, F1 of ref, F1 of new) over paired trajectories."
    same_tokens = total = 0
    for r, n in zip(ref, new):
        a = [t for s in r.steps for t in s.output_ids]
        b = [t for s in n.steps for t in s.output_ids]
        k = 0
        while k < min(len(a), len(b)) and a[k] == b[k]: k += 1
        same_tokens, total = same_tokens + k, total + len(a)
    answers = sum(normalize_answer(r.answer) == normalize_answer(n.answer) for r, n in zip(ref, new)) / len(ref)
    f1 = lambda trajs: sum(f1_score(t.answer, q.answers) for t, q in zip(trajs, questions)) / len(questions)
    return same_tokens / max(total, 1), answers, f1(ref), f1(new)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--compute', default='auto', choices=('auto', 'bfloat16'), help='what float32 is compared with')
    ap.add_argument('--bf16-min-rows', type=int, default=None, 
                    help='bf16 from this many rows on (default: the recorded crossover, core.AUTO_COMPUTE)')
    ap.add_argument('--questions', type=int, default=16)
    ap.add_argument('--max-turns', type=int, default=4)
    ap.add_argument('--threads', type=int, default=None, help='torch threads (default: $RAG_LIB_THREADS, else all)')
    a = ap.parse_args()
    set_threads(a.threads)
    dtype, rows = resolve_compute(a.compute, a.bf16_min_rows)
    res = dict(amx=int(bf16_support() == 'amx_bf16'), bf16_support=bf16_support() or 'none', threads=torch.get_num_threads(),
               compute=dtype, bf16_min_rows=rows)
    if bf16_support():   # without bf16 instructions torch emulates bf16: nothing to measure
        res.update(probe_min_rows=min_bf16_rows(probe_speedups()) or 'none',
                   auto_min_rows=resolve_compute('bfloat16')[1])
    if dtype == 'float32':   # `auto` is float32 here: float32 against itself would measure nothing in ~10 minutes
        print(' '.join(f'{k}={v}' for k, v in res.items()))
        print('targets skipped: `auto` is float32 on this CPU (no bf16 matrix instructions); '
              '--compute bfloat16 measures emulated bf16 against float32')
        return 0
    res['peak_fp32_gflops'] = round(peak_gflops(torch.float32), 1)
    res['peak_bf16_gflops'] = round(peak_gflops(torch.bfloat16), 1)
    print(res, flush=True)

    world = load_world()
    fp32 = TransformersBackend('smollm2', compute_dtype='float32', max_batch=32, threads=a.threads)
    auto = TransformersBackend('smollm2', compute_dtype=dtype, bf16_min_rows=rows, max_batch=32, threads=a.threads)
    long, short = prompts(fp32, world, 4, 512), prompts(fp32, world, 32, 64)

    (p32, _), (pau, t_auto) = prefill(fp32, long), prefill(auto, long)
    macs = linear_macs_per_token(auto.model) * sum(len(s) for s in long)
    res.update(prefill_tok_s_fp32=round(p32, 1), prefill_tok_s_auto=round(pau, 1), prefill_speedup=round(pau / p32, 2),
               prefill_linear_gflops_auto=round(2 * macs / t_auto / 1e9, 1))
    peak = res['peak_bf16_gflops'] if dtype == 'bfloat16' else res['peak_fp32_gflops']   # of what `auto` computes in
    res['prefill_peak_share'] = round(res['prefill_linear_gflops_auto'] / peak, 3)
    print(res, flush=True)

    d32, dau, dhead = decode(fp32, short), decode(auto, short), decode_float32_head(auto, short)
    res.update(decode_tok_s_fp32=round(d32, 1), decode_tok_s_auto=round(dau, 1), decode_speedup=round(dau / d32, 2),
               decode_tok_s_auto_fp32_head=round(dhead, 1), greedy_head_speedup=round(dau / dhead, 2))
    t32, tau = train_step('float32', None, 4), train_step(dtype, rows, 4)
    thead = train_step(dtype, rows, 4, float32_head=True)
    res.update(train_tok_s_fp32=round(t32, 1), train_tok_s_auto=round(tau, 1), train_speedup=round(tau / t32, 2),
               train_tok_s_auto_fp32_head=round(thead, 1), head_grad_speedup=round(tau / thead, 2))
    lf, lt = logprob_step(False), logprob_step(True)
    res.update(logprob_s_formula=round(lf, 3), logprob_s_fused=round(lt, 3), logprob_speedup=round(lf / lt, 2))
    print(res, flush=True)

    questions = world[:a.questions]
    retrieval = Retrieval(Corpus.from_questions(world, 'world'))
    retrieval.reranked('paragraph')
    t0 = time.perf_counter(); ref = trajectories(fp32, retrieval, questions, a.max_turns); s32 = time.perf_counter() - t0
    t0 = time.perf_counter(); new = trajectories(auto, retrieval, questions, a.max_turns); sau = time.perf_counter() - t0
    tok, ans, f32, fau = agreement(ref, new, questions)
    res.update(questions=len(questions), runner_s_fp32=round(s32, 1), runner_s_auto=round(sau, 1),
               greedy_token_agreement=round(tok, 3), answer_agreement=round(ans, 3), f1_float32=round(f32, 3),
               f1_auto=round(fau, 3))
    print(' '.join(f'{k}={v}' for k, v in res.items()))
    if res['amx'] and dtype == 'bfloat16':
        ok = (res['prefill_speedup'] >= 2.5 and res['decode_speedup'] >= 1.8 and res['train_speedup'] >= 2.0
              and ans >= 0.9)
        if not ok: print('target missed: prefill >= 2.5, decode >= 1.8, train >= 2.0, answers >= 0.9', file=sys.stderr)
        return 0 if ok else 1
    print(f"targets skipped: they need a CPU with AMX and `auto` in bf16 (this one: bf16_support={res['bf16_support']}, "
          f"compute={dtype})")
    return 0


if __name__ == '__main__':
    sys.exit(main())

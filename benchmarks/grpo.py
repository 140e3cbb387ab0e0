"""One GRPO step of the CPU trainer (rag_lib.train) on SmolLM2: rollout and training throughput, against a plain
forward pass of the same model over the same sequences, and the step's loss and gradient against verl's functions.

    python benchmarks/grpo.py [--prompts 2] [--group 4] [--adapter DIR] [--threads N] [--compute auto]

Rollouts: tokens the policy generated per second of the lockstep runner (prefill of the observations included).
Training: tokens of the trained sequences (prompt, outputs, observations) per second of the whole update (reference
pass for the KL, forward, backward, optimizer step). Reference: the same sequences in the same micro-batches through
a plain no-gradient forward pass (logits of the last position only, as a prefill). Target: train_tok_s at least a
quarter of prefill_tok_s (a backward pass costs about twice a forward), and the loss and gradient within 1e-6 of
verl's (`parity_max_abs_diff`). The last line is key=value pairs; the exit code is 0 only when both targets are met.
"""
import argparse, sys, time
from pathlib import Path

import torch

from rag_lib.agents import Sampling
from rag_lib.grpo import grpo_loss, scored_positions
from rag_lib.train import (GRPOConfig, grasp_agent, grpo_update, policy_for, logit_rows, make_optimizer, micro_batches,
                           rollouts, score, sequence_logprobs, step_questions, step_seed, swapped, training_sequence, world_data,
                           reference_dir)
from rag_lib.reward import RewardConfig


def verl_parity(policy, mb, trajs, adv, ref_lp, cfg) -> float:
    "Largest |ours - verl's| over the loss and its gradient w.r.t. the logit rows, on one micro-batch of the step."
    from verl.trainer.ppo import core_algos as vca
    from verl.utils import torch_functional as vF
    from verl.workers.config import ActorConfig
    with torch.no_grad(): rows = logit_rows(policy.lm, mb)
    b, t = scored_positions(mb.loss_mask)
    old = torch.zeros(mb.input_ids.shape)                       # the sampler's log-probs, as verl's rollout would give them
    for r, i in enumerate(mb.index):
        lp = [x for s in trajs[i].steps for x in (s.logprobs or [])]
        old[r, mb.loss_mask[r].bool()] = torch.tensor(lp)
    c, mode, mask = cfg.loss, cfg.loss.loss_agg_mode, mb.loss_mask
    x, y = rows.clone().requires_grad_(True), rows.clone().requires_grad_(True)
    ours, _ = grpo_loss(x, mb.input_ids, mask, old, adv[mb.index], ref_lp, c)
    put = lambda v: torch.zeros(mask.shape, dtype=v.dtype).index_put((b, t), v)
    logp, ent = put(vF.logprobs_from_logits(y / c.temperature, mb.input_ids[b, t])), put(vF.entropy_from_logits(y / c.temperature))
    acfg = ActorConfig(strategy='fsdp', rollout_n=1, ppo_micro_batch_size_per_gpu=1, clip_ratio_low=c.clip_ratio_low,
                       clip_ratio_high=c.clip_ratio_high, clip_ratio_c=c.clip_ratio_c)
    pg, _ = vca.compute_policy_loss_vanilla(old, logp, adv[mb.index][:, None] * mask, mask.bool(), loss_agg_mode=mode, config=acfg)
    theirs = pg - c.entropy_coeff * vca.agg_loss(ent, mask.bool(), mode)
    if c.kl_coef > 0: theirs = theirs + c.kl_coef * vca.agg_loss(vca.kl_penalty(logp, ref_lp, 'low_var_kl'), mask.bool(), mode)
    ours.backward(); theirs.backward()
    return max(abs(ours.item() - theirs.item()), float((x.grad - y.grad).abs().max()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--prompts', type=int, default=2, help='questions in the step')
    ap.add_argument('--group', type=int, default=4, help='rollouts per question (G)')
    ap.add_argument('--adapter', default=None, help='LoRA folder to start from (default: the committed trained adapter, if present)')
    ap.add_argument('--base', action='store_true', help='start from the untrained model (Base) instead of an adapter')
    ap.add_argument('--threads', type=int, default=None, help='torch threads (default: $RAG_LIB_THREADS, else all cores)')
    ap.add_argument('--micro-batch', type=int, default=4)
    ap.add_argument('--compute', default='auto', choices=('auto', 'float32', 'bfloat16'), help='compute_dtype of the policy')
    a = ap.parse_args()
    adapter = None if a.base else (a.adapter or (str(reference_dir() / "adapter") if (reference_dir() / "adapter").exists() else None))
    cfg = GRPOConfig(steps=1, prompts_per_step=a.prompts, group_size=a.group, init_adapter=adapter, threads=a.threads,
                     micro_batch=a.micro_batch, compute_dtype=a.compute).resolved()
    policy = policy_for(cfg)
    questions, retrieval = world_data(cfg.train_worlds, cfg.world_questions)
    backend = policy.backend(cfg.threads)
    agent = grasp_agent(backend, retrieval, cfg.max_turns)
    ref = {n: p.detach().clone() for n, p in policy.trainable().items()}
    qs = step_questions(questions, 0, cfg.prompts_per_step, cfg.seed)

    t0 = time.perf_counter()
    trajs = rollouts(agent, backend, qs, cfg.group_size, Sampling(cfg.temperature, cfg.top_p, step_seed(cfg.seed, 0)), cfg.max_live)
    t_roll = time.perf_counter() - t0
    generated = sum(len(s.output_ids) for t in trajs for s in t.steps)
    rewards, adv = score(trajs, qs, retrieval.corpus, RewardConfig(max_turns=cfg.max_turns))

    pad = policy.tokenizer.pad_token_id or 0
    keep = [i for i, t in enumerate(trajs) if any(training_sequence(t)[1])]
    mbs = [type(mb)(mb.input_ids, mb.loss_mask, [keep[j] for j in mb.index], mb.prefix)
           for mb in micro_batches([training_sequence(trajs[i]) for i in keep], cfg.micro_batch, pad)]
    with swapped(policy.trainable(), ref): ref_lp = sequence_logprobs(policy.lm, mbs[:1], cfg.temperature)[0]
    parity = verl_parity(policy, mbs[0], trajs, adv, ref_lp, cfg)
    policy.module.zero_grad(set_to_none=True)

    opt = make_optimizer(policy, cfg)
    t0 = time.perf_counter()
    stats = grpo_update(policy, opt, trajs, adv, cfg, ref, 0)
    t_train = time.perf_counter() - t0

    t0 = time.perf_counter()
    with torch.no_grad():
        for mb in mbs: policy.lm(input_ids=mb.input_ids, logits_to_keep=1)
    t_plain = time.perf_counter() - t0
    tokens = stats['sequence_tokens']
    res = dict(rollouts=len(trajs), rollout_tokens=generated, rollout_s=round(t_roll, 2), rollout_tok_s=round(generated / t_roll, 1),
               sequence_tokens=tokens, trained_tokens=stats['trained_tokens'], train_s=round(t_train, 2),
               train_tok_s=round(tokens / t_train, 1), prefill_s=round(t_plain, 2), prefill_tok_s=round(tokens / t_plain, 1),
               train_over_prefill=round(t_plain / t_train, 3), reward=round(sum(r['total'] for r in rewards) / len(rewards), 3),
               logprob_diff_max=stats['logprob_diff_max'], parity_max_abs_diff=f'{parity:.2e}',
               threads=torch.get_num_threads(), adapter=adapter or 'none', compute=cfg.compute_dtype)
    print(' '.join(f'{k}={v}' for k, v in res.items()))
    ok = res['train_over_prefill'] >= 0.25 and parity <= 1e-6
    if not ok: print('target missed: train_over_prefill >= 0.25, parity_max_abs_diff <= 1e-6', file=sys.stderr)
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())

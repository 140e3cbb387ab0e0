"""rag_lib's GPU code paths on CUDA, without network and without real weights (run by scripts/device_check.sh).

A Qwen2-architecture model built from a config with random weights, on the byte-level chat tokenizer the tests use
(`verl_integration.byte_chatml_tokenizer`), runs `TransformersBackend` on CUDA through the `Runner` for the ReAct
agent and GRASP's agent on the generated world, greedy and sampled; the GRPO loss of those trajectories is computed
on CUDA and on the CPU and compared; a random-weight embedder and cross-encoder reranker (saved with the same
tokenizer) encode and score on CUDA against the CPU. Prints one JSON summary; exits 0 only if every check passed.
DEVICE_CHECK_DEVICE=cpu runs the same script on the CPU (to try the script itself; it proves nothing about CUDA)."""
import copy, json, os, sys, tempfile, time
from pathlib import Path

T0 = time.perf_counter()
DEVICE = os.environ.get('DEVICE_CHECK_DEVICE', 'cuda')
import torch
if DEVICE == 'cuda' and not torch.cuda.is_available():
    print(f'device_check: FAILED: no CUDA device visible (torch {torch.__version__}, built for CUDA '
          f'{torch.version.cuda}); run it on a GPU machine (DEVICE_CHECK_DEVICE=cpu only tries the script)',
          file=sys.stderr)
    sys.exit(2)
os.environ.setdefault('RAG_LIB_CACHE', tempfile.mkdtemp(prefix='device_check_cache_'))
os.environ.update(HF_HUB_OFFLINE='1', TRANSFORMERS_OFFLINE='1')

import numpy as np
from transformers import BertConfig, BertForSequenceClassification, BertModel, Qwen2Config, Qwen2ForCausalLM
from rag_lib.agents.runner import Runner, Sampling
from rag_lib.core import get_profile
from rag_lib.corpus import Corpus
from rag_lib.grpo import GRPOLossConfig, grpo_loss, token_batch, token_logprobs
from rag_lib.llm import TransformersBackend
from rag_lib.methods import build_agent
from rag_lib.retrieval import CrossEncoderReranker, Embedder, Retrieval
from rag_lib.verl_integration import byte_chatml_tokenizer
from rag_lib.world import load_world

checks, failed = {}, []
def check(name: str, ok: bool, **info):
    checks[name] = {'ok': bool(ok), **info}
    if not ok: failed.append(name)
    print(f"{'ok    ' if ok else 'FAILED'} {name} {json.dumps(info, default=str)}", flush=True)

tok = byte_chatml_tokenizer()
info = {'device': DEVICE, 'torch': torch.__version__, 'cuda': torch.version.cuda,
        'gpu': torch.cuda.get_device_name(0) if DEVICE == 'cuda' else None}
print('device_check:', json.dumps(info), flush=True)

# --- encoders: random weights saved with the byte tokenizer, CUDA against the CPU ------------------------------
work = Path(tempfile.mkdtemp(prefix='device_check_models_'))
torch.manual_seed(0)
bert = BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                  intermediate_size=64, max_position_embeddings=512, pad_token_id=tok.pad_token_id)
BertModel(bert).save_pretrained(work / 'bert'); tok.save_pretrained(work / 'bert')
from sentence_transformers import SentenceTransformer, models
SentenceTransformer(modules=[models.Transformer(str(work / 'bert'), max_seq_length=256),
                             models.Pooling(32, 'mean')]).save(str(work / 'embedder'))
BertForSequenceClassification(BertConfig(**{**bert.to_dict(), 'num_labels': 1})).save_pretrained(work / 'reranker')
rtok = byte_chatml_tokenizer(); rtok.chat_template = None   # plain (query, document) pairs, no chat roles
rtok.save_pretrained(work / 'reranker')
texts = ['Who founded the city?', 'The river runs north of the old mill.', 'A painter born in 1820.']
t = time.perf_counter()
emb = Embedder(str(work / 'embedder'), device=DEVICE, dtype='float32')
e_dev, e_cpu = emb.encode_docs(texts), Embedder(str(work / 'embedder'), device='cpu').encode_docs(texts)
check('embedder', np.allclose(e_dev, e_cpu, atol=1e-4), on=str(emb.model.device),
      max_diff=float(np.abs(e_dev - e_cpu).max()), seconds=round(time.perf_counter() - t, 1))
bf = Embedder(str(work / 'embedder'), device=DEVICE, dtype='bfloat16')
check('embedder_bf16', np.allclose(bf.encode_docs(texts), e_cpu, atol=5e-2),
      dtype=str(next(bf.model.parameters()).dtype))
rr = CrossEncoderReranker(str(work / 'reranker'), device=DEVICE)
s_dev = rr.score(texts[0], ['a', 'b'], texts[1:])
s_cpu = CrossEncoderReranker(str(work / 'reranker'), device='cpu').score(texts[0], ['a', 'b'], texts[1:])
check('reranker', np.allclose(s_dev, s_cpu, atol=1e-4), max_diff=float(np.abs(s_dev - s_cpu).max()))

# --- TransformersBackend on the device through the Runner: ReAct and GRASP on the world -------------------------
torch.manual_seed(0)
qwen = Qwen2ForCausalLM(Qwen2Config(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                    num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=8192,
                                    tie_word_embeddings=True))
cpu_model = copy.deepcopy(qwen)
backend = TransformersBackend(qwen, tokenizer=tok, device=DEVICE, name='random-qwen2')
world = load_world(n=60)
questions = world[:3]
retrieval = Retrieval(Corpus.from_questions(world, 'world'), emb, str(work / 'reranker'), {'device': DEVICE},
                      candidates=10)
prof = get_profile('cpu', max_turns=3, grasp_max_turns=3, react_shown=5, candidates=10)

def roomy(agent):
    "`agent` with room for its whole template in bytes (its `max_new_tokens` is sized for BPE tokenizers)."
    agent.__class__ = type(type(agent).__name__, (type(agent),), {'max_new_tokens': 200})
    return agent

trajs = {}
for name in ('react', 'base'):
    for mode, sampling in (('greedy', None), ('sampled', Sampling(temperature=1.0, top_p=0.9, seed=1))):
        t = time.perf_counter()
        try:
            out = Runner(roomy(build_agent(name, backend, retrieval, prof)), backend, max_live=8, progress=False,
                         sampling=sampling).run(questions)
            ok = all(len(x.steps) >= 1 and x.done for x in out)
            trajs[name, mode] = out
            check(f'runner_{name}_{mode}', ok, steps=sum(len(x.steps) for x in out),
                  statuses=sorted({x.status for x in out}), seconds=round(time.perf_counter() - t, 1))
        except Exception as e:
            check(f'runner_{name}_{mode}', False, error=f'{type(e).__name__}: {e}'[:500])
backend.cache_prefix(tok.encode('<|im_start|>system\nprobe<|im_end|>\n'), key='probe')   # a kept KV cache
check('kv_on_device', {k.device.type for e in backend.cache.values() for k, v in e.kv} == {DEVICE},
      entries=len(backend.cache))

# --- GRPO losses on the device against the CPU ----------------------------------------------------------------
sampled = [x for k, v in trajs.items() if k[1] == 'sampled' for x in v if any(s.output_ids for s in x.steps)]
if sampled:
    try:
        b = token_batch(sampled, pad_id=tok.pad_token_id)
        cfg = GRPOLossConfig(entropy_coeff=0.0021, kl_coef=0.001)
        adv = torch.linspace(-1, 1, len(sampled))
        def loss_on(model, device):
            model = model.to(device).float().train()
            ids, att, mask = b.input_ids.to(device), b.attention_mask.to(device), b.loss_mask.to(device)
            logits = model(input_ids=ids, attention_mask=att).logits
            with torch.no_grad(): old = token_logprobs(logits.detach(), ids, mask, cfg.temperature)
            loss, parts = grpo_loss(logits, ids, mask, old - 0.01, adv.to(device), old + 0.02, cfg)
            loss.backward()
            grad = torch.sqrt(sum((p.grad.float() ** 2).sum() for p in model.parameters() if p.grad is not None))
            return parts, float(grad)
        dev_parts, dev_grad = loss_on(copy.deepcopy(cpu_model), DEVICE)
        cpu_parts, cpu_grad = loss_on(copy.deepcopy(cpu_model), 'cpu')
        close = all(abs(dev_parts[k] - cpu_parts[k]) <= 1e-4 + 1e-3 * abs(cpu_parts[k]) for k in cpu_parts)
        check('grpo_loss', close and abs(dev_grad - cpu_grad) <= 1e-3 * max(1.0, cpu_grad),
              device=dev_parts, cpu=cpu_parts, grad_norm=(dev_grad, cpu_grad), tokens=int(b.loss_mask.sum()))
    except Exception as e:
        check('grpo_loss', False, error=f'{type(e).__name__}: {e}'[:500])
else: check('grpo_loss', False, error='no sampled trajectory with output tokens')

summary = {**info, 'seconds': round(time.perf_counter() - T0, 1), 'failed': failed, 'checks': checks}
print(json.dumps(summary, indent=1, default=str))
print('device_check:', 'ok' if not failed else f'FAILED ({", ".join(failed)})')
sys.exit(1 if failed else 0)

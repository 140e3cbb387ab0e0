"""vLLM's conventions against the CPU backend's: one model, run by the vLLM 0.24 stand-in's engine
(`llm.vllm_standin`: its logits step by step through the template's logits processor, EOS kept in `token_ids`,
`length` at `max_tokens`, vLLM's keywords only) and by `TransformersBackend`, gives the same contexts token for
token under one constraint and one length rule; no context holds a doubled `<|im_end|>`."""
import json, logging, sys
from unittest import mock

import pytest
import torch
from transformers import Qwen2Config, Qwen2ForCausalLM

from rag_lib.agents import ReActAgent, ReActConfig
from rag_lib.agents.runner import Runner, Sampling
from rag_lib.core import get_profile
from rag_lib.corpus import Corpus
from rag_lib.llm import Choice, Free, Lit, Request, Template, TransformersBackend, VLLMBackend
from rag_lib.llm.vllm_standin import standin_vllm
from rag_lib.methods import build_agent
from rag_lib.retrieval import Retrieval
from rag_lib.verl_integration.launch import byte_chatml_tokenizer
from rag_lib.world import load_world

TOK = byte_chatml_tokenizer()
EOS = TOK.eos_token_id


@pytest.fixture(scope='module')
def cpu():
    "A random-weight Qwen2-architecture model on the byte-level chat tokenizer, as the transformers backend."
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(Qwen2Config(vocab_size=len(TOK), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=8192,
                                         tie_word_embeddings=True))
    return TransformersBackend(model, tokenizer=TOK, threads=1, name='tiny-qwen2')


def _standin(cpu):
    """vLLM 0.24 stand-in modules whose model is `cpu`'s: its logits, one token per step over the batch, through the
    engine's logits processors (`TemplateLogitsProcessor`), with vLLM's conventions around them."""
    def next_logits(ids):
        with torch.no_grad(): return cpu.model(torch.tensor([ids])).logits[0, -1].float()
    return standin_vllm(None, TOK, EOS, next_logits=next_logits)


def _choices(cpu):
    """Stand-in modules whose model returns `cpu`'s own completions (the template read from `extra_args`): for
    sampled requests, whose seeded draws differ between engines (vLLM's sampler draws at forced tokens too)."""
    def complete(ids, params, lora):
        tpl = Template.from_spec(params.extra_args['rag_template']) if params.extra_args else None
        r = Request(ids, params.max_tokens - (tpl is not None), tpl, temperature=params.temperature, top_p=params.top_p,
                    seed=params.seed, logprobs=True)
        c = cpu.generate([r])[0]
        more = [c.token_ids[-1]] if c.finish_reason == 'length' else []   # a cut model would go on: vLLM cuts it
        return c.token_ids + more, c.logprobs + [-1.0] * len(more)
    return standin_vllm(complete, TOK, EOS)


def _folder(tmp_path):
    "A model folder as vLLM reads it: config.json (vocab_size) and the tokenizer files."
    TOK.save_pretrained(tmp_path)
    (tmp_path / 'config.json').write_text(json.dumps({'vocab_size': len(TOK)}))
    return str(tmp_path)


@pytest.fixture(scope='module')
def world():
    w = load_world(n=300)
    return w[:2], Retrieval(Corpus.from_questions(w, 'world'))


def _roomy(agent):
    "`agent` with room for its whole template in bytes (its `max_new_tokens` is sized for BPE tokenizers)."
    agent.__class__ = type(type(agent).__name__, (type(agent),), {'max_new_tokens': 400})
    return agent


def _run(make_agent, backend, qs, sampling=None):
    return Runner(_roomy(make_agent(backend)), backend, max_live=4, progress=False, sampling=sampling).run(qs)


@pytest.mark.parametrize('method', ['react', 'base'])
def test_contexts_equal_across_backends(cpu, world, method, tmp_path):
    qs, ret = world
    prof = get_profile('cpu', max_turns=3, grasp_max_turns=3)
    make = lambda b: build_agent(method, b, ret, prof)
    ref = _run(make, cpu, qs)
    with mock.patch.dict(sys.modules, _standin(cpu)):
        vb = VLLMBackend(_folder(tmp_path), seed=0)
        got = _run(make, vb, qs)
        engine = sys.modules['vllm'].LLM.last
    assert any(o.outputs[0].token_ids[-1] == EOS for o in engine.outputs)   # vLLM's EOS came, and was dropped
    for a, b in zip(ref, got):
        assert len(a.steps) >= 2, 'a multi-turn trajectory is what this test is about'
        assert b.context_ids() == a.context_ids()                       # token for token
        assert [s.output_ids for s in b.steps] == [s.output_ids for s in a.steps]
        text = TOK.decode(b.context_ids())
        assert '<|im_end|><|im_end|>' not in text and '<|im_end|>\n<|im_end|>' not in text


def test_eos_and_its_logprob_are_stripped(cpu, world, tmp_path):
    qs, ret = world
    make = lambda b: ReActAgent(b, ret, ReActConfig(max_turns=2))
    samp = Sampling(temperature=1.0, top_p=1.0, seed=3)
    ref = _run(make, cpu, qs[:1], samp)
    with mock.patch.dict(sys.modules, _choices(cpu)):
        vb = VLLMBackend(_folder(tmp_path))
        got = _run(make, vb, qs[:1], samp)
    for a, b in zip(ref[0].steps, got[0].steps):
        assert b.output_ids == a.output_ids and EOS not in b.output_ids
        assert b.logprobs == pytest.approx(a.logprobs) and len(b.logprobs) == len(b.output_ids)


def test_length_finishes_cut_alike_and_counted(cpu, tmp_path, caplog):
    tpl = Template((Lit('Thought: '), Free('\n', 40), Lit('Action: '), Choice(('search[', 'answer[')), Free(']', 8)))
    req = Request(TOK.encode('<|im_start|>user\nWho?<|im_end|>\n<|im_start|>assistant\n'), 6, tpl)
    ok = Request(req.tokens, 80, tpl)
    a, full = cpu.generate([req, ok])
    assert a.finish_reason == 'length' and full.finish_reason == 'template'
    with mock.patch.dict(sys.modules, _standin(cpu)), caplog.at_level(logging.WARNING):
        vb = VLLMBackend(_folder(tmp_path))
        b, vfull = vb.generate([req, ok])
        params = sys.modules['vllm'].LLM.last.calls[-1][1]
    assert (b.token_ids, b.finish_reason) == (a.token_ids, 'length')      # the same 6 tokens, cut alike
    assert (vfull.token_ids, vfull.finish_reason) == (full.token_ids, 'template')
    assert [p.max_tokens for p in params] == [7, 81]                        # one more: the grammar's EOS
    assert vb.stats['length'] == 1 and vb.stats['completions'] == 2
    assert '1 of 2 completions ended at max_tokens' in caplog.text


def test_unknown_engine_keywords_are_refused(tmp_path):
    (tmp_path / 'config.json').write_text('{}')
    with mock.patch.dict(sys.modules, standin_vllm(lambda *a: ([], []), TOK, EOS)):
        with pytest.raises(TypeError, match="'adapter_path'"):
            VLLMBackend(str(tmp_path), adapter_path='x')             # not a keyword of vllm.LLM 0.24
        vb = VLLMBackend(str(tmp_path), name='policy')               # rag_lib's own keywords never reach vllm.LLM
        assert vb.name == 'policy' and 'name' not in sys.modules['vllm'].LLM.last.kw


def test_lora_policy_is_served_with_a_lora_request(tmp_path):
    (tmp_path / 'config.json').write_text('{}')
    ad = tmp_path / 'adapter'; ad.mkdir(); (ad / 'adapter_config.json').write_text('{"r": 12}')
    calls = []
    model = lambda ids, s, lora: (calls.append(lora) or [65], [-1.0])
    with mock.patch.dict(sys.modules, standin_vllm(model, TOK, EOS)):
        vb = VLLMBackend(str(tmp_path), adapter=str(ad), name='grasp')
        kw = sys.modules['vllm'].LLM.last.kw
        c = vb.generate([Request([1, 2], 4)])[0]
    assert (kw['enable_lora'], kw['max_lora_rank']) == (True, 16)            # vLLM's next rank size above 12
    assert calls[0].lora_path == str(ad) and c.token_ids == [65]

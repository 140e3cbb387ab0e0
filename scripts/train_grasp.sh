#!/usr/bin/env bash
# Train GRASP with verl (GRPO, FSDP, vLLM rollouts, the rag_lib tools and reward).
#
#   scripts/train_grasp.sh [paper|smoke] [hydra overrides ...]
#
# paper: configs/verl/grasp_grpo.yaml (Qwen2.5-3B-Instruct, 270 steps x 64 prompts, 2 GPUs of one node)
# smoke: configs/verl/grasp_grpo_smoke.yaml (SMOKE_MODEL, 3 steps, 1 GPU)
# Environment: GRASP_DATA (scripts/build_verl_data.py's --out, default data/verl), GRASP_OUT (default
# outputs/verl: train.log, metrics.jsonl, checkpoints/, rollouts/), SMOKE_MODEL (smoke only).
# Extra hydra overrides go to verl, e.g. trainer.n_gpus_per_node=8 actor_rollout_ref.rollout.tensor_model_parallel_size=2
set -euo pipefail
cd "$(dirname "$0")/.."
which=${1:-paper}; [ $# -gt 0 ] && shift
case "$which" in
  paper) name=grasp_grpo ;;
  smoke) name=grasp_grpo_smoke ;;
  *) echo "usage: $0 [paper|smoke] [hydra overrides ...]" >&2; exit 2 ;;
esac
export GRASP_DATA=$(realpath -m "${GRASP_DATA:-data/verl}")
export GRASP_OUT=$(realpath -m "${GRASP_OUT:-outputs/verl}")
for f in train.parquet val.parquet tools.yaml; do
  [ -f "$GRASP_DATA/$f" ] || { echo "$GRASP_DATA/$f missing: run scripts/build_verl_data.py --out $GRASP_DATA first" >&2; exit 1; }
done
mkdir -p "$GRASP_OUT"
export VERL_FILE_LOGGER_PATH=${VERL_FILE_LOGGER_PATH:-$GRASP_OUT/metrics.jsonl}
# the composed config is checked (unknown keys, verl's own validation) before Ray starts
python -c "import sys; from rag_lib.verl_integration import check_verl_config; check_verl_config('configs/verl/$name.yaml', sys.argv[1:])" "$@"
python -m verl.trainer.main_ppo --config-path "$(pwd)/configs/verl" --config-name "$name" "$@" 2>&1 | tee "$GRASP_OUT/train.log"

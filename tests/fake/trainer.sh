#!/usr/bin/env bash
# A fake trainer for `sparkops run` tests: prints an HF/tqdm progress bar (carriage-return updates
# on stderr) and HF-style loss dicts, FAST steps of FAST_S seconds, then SLOW steps of SLOW_S seconds.
# At the start of the slow phase it runs $TRAINER_HOOK (e.g. a contending server appearing).
# Usage: trainer.sh FAST SLOW FAST_S SLOW_S [EXIT_CODE]
fast=$1 slow=$2 fast_s=$3 slow_s=$4 code=${5:-0}
total=$((fast + slow))
echo "Loading checkpoint shards: done"
for ((i = 1; i <= total; i++)); do
  if ((i == fast + 1)) && [ -n "${TRAINER_HOOK:-}" ]; then bash -c "$TRAINER_HOOK"; fi
  if ((i <= fast)); then sleep "$fast_s"; else sleep "$slow_s"; fi
  printf '\r%3d%%|##        | %d/%d [00:01<00:10, 2.00it/s]' $((i * 100 / total)) "$i" "$total" >&2
  if ((i % 10 == 0)); then printf "\n{'loss': %s, 'grad_norm': 1.0, 'learning_rate': 0.0002, 'epoch': 0.%02d}\n" "2.$i" "$i"; fi
done
echo >&2
exit "$code"

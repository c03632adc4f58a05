#pragma once
/// Step lines that hand-written training loops print, and Rich progress bars (Lightning's
/// default bar when `rich` is installed). Pure functions of one line (logging prefixes already
/// stripped), no regex; ParseStepLine calls them only for lines no framework parser took.
#include <string_view>

#include "analysis/step_line.h"

namespace sparkops {

/// A hand-written loop's line: `step 12`, `Step 12/300`, `step: 12`, `step=12`, `it 12`,
/// `iter 12`, `Epoch 2 Step 12`, `Epoch 2/3 | Step 12/300`, each followed by fields after `|`,
/// `,`, `;` or spaces: `loss 1.96`, `loss: 1.96`, `loss=1.96`, `lr 3e-4`, `time 0.35s`,
/// `time 350 ms`, `350ms`, `dt 0.35`, `1.5 it/s`, `2.1 s/it`, `tok/s 1234`.
/// - step: the printed number; with `Epoch E` and a total `S/T` (a per-epoch batch counter) the
///   step is E*T+S, so the counter stays increasing across epochs.
/// - step_time_s: `time`/`dt`/`step_time`/`iter_time`/`batch_time` in seconds, or milliseconds
///   when the key ends in `ms` or the value carries `ms`; `it/s` and `s/it` rates.
/// - An evaluation (`val`, `eval`, `valid`, `test` in a key or word) gives Kind::kEval; a
///   learning-rate schedule line (`scheduler`, `adjusting`, `->`, or `lr` as its only field)
///   and a line whose step number runs into a word (`step 3rd`) give false.
/// True when the line is one of these (r.kind set, r.format "plain"); `r` is untouched otherwise.
bool ParsePlainStep(std::string_view s, StepLine& r);

/// One Rich progress bar state, as Lightning's RichProgressBar draws it:
/// `Epoch 1/3  ━━━━━━╸━━━  51/120 0:00:35 • 0:00:45 1.54it/s v_num: 0 train_loss: 2.293`.
/// `Epoch E/L` (0-based epoch E of 0..L), the batch counter N/M, the rate (it/s, a moving
/// average), then `name: value` metrics. step = E*M+N. `Validation`, `Sanity Checking` and
/// `Testing` bars give Kind::kEval; other descriptions are another loop (Kind::kBar).
/// True when the line is such a bar (r.format "rich").
bool ParseRichBar(std::string_view s, StepLine& r);

}  // namespace sparkops

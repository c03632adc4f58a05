#include "memory/ladder.h"

#include <fmt/format.h>

#include <algorithm>

#include "host/dropcaches.h"

namespace sparkops::memory {
namespace {

constexpr double kWorthFlushingGiB = 1.0;  ///< less reclaimable cache than this is not worth a rerun

std::optional<Plan> Replan(const Plan& p, const PlanOptions& o) {
  auto r = MakePlan(p.model, o, p.budget);
  if (!r) return std::nullopt;
  return *r;
}

std::optional<Plan> Replan(const Plan& p, Method m) {
  PlanOptions o = p.options;
  o.method = m;
  return Replan(p, o);
}

}  // namespace

std::optional<double> PageCacheReading::AvailableLift() const {
  if (!gib || !free_gib || !available_gib) return std::nullopt;
  return std::max(0.0, *free_gib + *gib - *available_gib);
}

Ladder BuildLadder(const Result<MemInfo>& mi, const std::optional<Plan>& plan, const std::optional<OomSignature>& oom) {
  PageCacheReading cache;
  if (mi) {
    if (auto c = mi->PageCache()) cache.gib = ToGiB(*c);
    if (mi->free) cache.free_gib = ToGiB(*mi->free);
    if (mi->available) cache.available_gib = ToGiB(*mi->available);
  }
  return BuildLadder(cache, plan, oom);
}

Ladder BuildLadder(const PageCacheReading& cache, const std::optional<Plan>& plan,
                   const std::optional<OomSignature>& oom) {
  Ladder l;
  l.page_cache_gib = cache.gib;
  const bool on_available =
      cache.judged_on_available || (oom && (oom->kind == OomKind::kKernelOomKiller || oom->kind == OomKind::kKilled));
  const bool cuda_side = !on_available;  // a CUDA allocation failed, or the kind is not known
  const auto lift = cache.AvailableLift();
  // Worth a rerun: enough cache, and a flush that lifts what the stop was judged on.
  const bool worth = cache.gib && *cache.gib >= kWorthFlushingGiB && (!lift || *lift >= kWorthFlushingGiB || cuda_side);
  std::string detail =
      cache.gib ? fmt::format("{:.1f} GiB of page cache {} reclaimable {} (Cached + Buffers - Shmem, meminfo)",
                              *cache.gib, cache.when == "now" ? "is" : "was", cache.when)
                : std::string("page cache not reported by meminfo");
  const bool some = cache.gib && *cache.gib >= kWorthFlushingGiB;  // below it, nothing worth saying
  if (some && lift && *lift < kWorthFlushingGiB)
    detail += fmt::format(
        "; MemAvailable ({:.1f} GiB) already counts all but {:.1f} GiB of it, so a flush would not lift it (no help "
        "against the guard's floor or the kernel's OOM killer, which count or reclaim the cache themselves)",
        *cache.available_gib, *lift);
  else if (some && lift) detail += fmt::format("; a flush would lift MemAvailable by about {:.1f} GiB", *lift);
  if (some && cuda_side && cache.free_gib)
    detail += fmt::format(
        "; what CUDA reports free on GB10 leaves the cache out: a flush lifts it (MemFree {:.1f} -> about {:.1f} "
        "GiB), which a CUDA allocation or a server's start-up check reads (vllm-project/vllm#35313)",
        *cache.free_gib, *cache.free_gib + *cache.gib);
  detail += worth ? fmt::format(
                        "; `sudo sparkops flush` (sync; echo 3 > {}) - a between-run reset, not a "
                        "mid-training step",
                        kDropCachesPath)
            : cache.gib && *cache.gib >= kWorthFlushingGiB ? "; skip it"
                                                           : "; `sudo sparkops flush` between runs";
  l.steps.push_back({1, "flush the page cache", detail});
  const bool qlora_load_oom = plan && plan->options.method == Method::kQlora && oom &&
                              (oom->phase == OomPhase::kLoad || oom->phase == OomPhase::kDequant);
  if (!plan) {
    l.steps.push_back({2, "shorter packing, then a smaller batch",
                       "give MODEL and the plan options for the largest values that fit"});
    l.steps.push_back({3, "downgrade the method: full -> bf16 LoRA -> QLoRA", "give MODEL to see which method fits"});
    l.steps.push_back({4, "smaller model, or two Sparks with DDP/FSDP (never tensor parallelism for training)",
                       "when steps 1-3 still do not fit"});
    // Without a plan the flush stays first unless it is known not to help the stop it follows.
    const bool useless = on_available && lift && *lift < kWorthFlushingGiB;
    l.next = useless ? 2 : 1;
    l.why_next = useless
                     ? "a flush would not lift MemAvailable: the pool is held, not cached; batch size is never step 1"
                     : "the ladder starts with the flush; batch size is never step 1";
    return l;
  }
  const PlanOptions& o = plan->options;
  const Breakdown& b = plan->high;  // the figures verdicts use
  std::optional<Plan> ckpt;  // the same run with gradient checkpointing on, when it is off
  if (!o.grad_ckpt) {
    PlanOptions on = o;
    on.grad_ckpt = true;
    ckpt = Replan(*plan, on);
  }
  std::string s2;
  if (ckpt)
    s2 = fmt::format(
        "gradient checkpointing on: peak {:.1f} -> {:.1f} GiB (saves {:.1f} GiB; about one more forward "
        "pass per step, same results); then ",
        b.peak() / kGiB, ckpt->high.peak() / kGiB, (b.peak() - ckpt->high.peak()) / kGiB);
  if (plan->max_seq && *plan->max_seq < o.seq)
    s2 += fmt::format("pack length {} -> {} (largest that fits at batch {})", o.seq, *plan->max_seq, o.batch);
  else if (plan->max_seq)
    s2 += fmt::format("pack length {} already fits at batch {} (up to {})", o.seq, o.batch, *plan->max_seq);
  else s2 += fmt::format("no pack length fits at batch {}", o.batch);
  if (plan->max_batch && *plan->max_batch < o.batch)
    s2 += fmt::format("; then batch {} -> {} at seq {}", o.batch, *plan->max_batch, o.seq);
  else if (!plan->max_batch) s2 += fmt::format("; no batch fits at seq {}", o.seq);
  else s2 += fmt::format("; batch up to {} fits at seq {}", *plan->max_batch, o.seq);
  l.steps.push_back({2,
                     ckpt ? "gradient checkpointing, then shorter packing, then a smaller batch"
                          : "shorter packing, then a smaller batch",
                     s2});

  std::optional<Plan> lora, qlora;
  if (o.method == Method::kFull || o.method == Method::kQlora) lora = Replan(*plan, Method::kLora);
  if (o.method != Method::kQlora) qlora = Replan(*plan, Method::kQlora);
  std::string s3;
  auto describe = [](const char* what, const std::optional<Plan>& p) {
    if (!p) return fmt::format("{}: could not be planned", what);
    return fmt::format("{}: peak {:.1f} GiB of {:.1f} GiB -> {}", what, p->high.peak() / kGiB, p->budget.bytes / kGiB,
                       ToString(p->verdict));
  };
  if (o.method == Method::kFull) s3 = describe("bf16 LoRA", lora) + "; " + describe("QLoRA", qlora);
  else if (o.method == Method::kLora) s3 = describe("QLoRA", qlora);
  else
    s3 = "QLoRA is the last tier; " + describe("bf16 LoRA", lora) +
         (qlora_load_oom ? " - a QLoRA OOM during load/dequantisation is not proof the model doesn't fit" : "");
  l.steps.push_back({3, "downgrade the method: full -> bf16 LoRA -> QLoRA", s3});
  l.steps.push_back({4, "smaller model, or two Sparks with DDP/FSDP (never tensor parallelism for training)",
                     "when steps 1-3 still do not fit"});

  const bool lora_fits = lora && lora->verdict != Verdict::kNoFit;
  const bool ckpt_fits = ckpt && ckpt->verdict != Verdict::kNoFit;
  const bool shrink_fits = (plan->max_seq && *plan->max_seq < o.seq) || (plan->max_batch && *plan->max_batch < o.batch);
  if (worth) {
    l.next = 1;
    l.why_next =
        fmt::format("{:.1f} GiB of page cache can be dropped for free before changing the run", *l.page_cache_gib);
  } else if (qlora_load_oom && lora_fits) {
    l.next = 3;
    l.why_next = fmt::format(
        "the OOM was at {} with bitsandbytes; bf16 LoRA fits (peak {:.1f} GiB), and a QLoRA OOM "
        "is not proof the model doesn't fit",
        ToString(oom->phase), lora->high.peak() / kGiB);
  } else if (plan->verdict == Verdict::kNoFit && ckpt_fits) {
    l.next = 2;
    l.why_next = fmt::format(
        "gradient checkpointing is off; turning it on fits (peak {:.1f} GiB of {:.1f} GiB, saves "
        "{:.1f} GiB) without changing the pack, batch or method",
        ckpt->high.peak() / kGiB, plan->budget.bytes / kGiB, (b.peak() - ckpt->high.peak()) / kGiB);
  } else if (plan->verdict == Verdict::kNoFit && shrink_fits) {
    l.next = 2;
    l.why_next = "the plan does not fit as configured; a shorter pack (or smaller batch) does";
  } else if (plan->verdict == Verdict::kNoFit) {
    const bool qlora_fits = qlora && qlora->verdict != Verdict::kNoFit;
    std::string tier;
    if (o.method == Method::kFull && lora_fits) tier = "bf16 LoRA";
    else if (o.method != Method::kQlora && qlora_fits) tier = "QLoRA";
    l.next = tier.empty() ? 4 : 3;
    l.why_next = tier.empty() ? "no pack length, batch or method tier fits this budget"
                              : "no pack length or batch makes it fit; " + tier + " does";
  } else {
    l.next = 2;
    l.why_next = fmt::format(
        "the planner says this configuration {} (peak {:.1f} GiB of {:.1f} GiB): check what else "
        "holds the pool (`sparkops ps`), then {}",
        ToString(plan->verdict), b.peak() / kGiB, plan->budget.bytes / kGiB,
        ckpt ? fmt::format("turn gradient checkpointing on (saves {:.1f} GiB)", (b.peak() - ckpt->high.peak()) / kGiB)
             : std::string("shorten the pack"));
  }
  return l;
}

}  // namespace sparkops::memory

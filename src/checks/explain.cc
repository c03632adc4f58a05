#include "checks/explain.h"

namespace sparkops {

const std::vector<Explanation>& Explanations() {
  static const std::vector<Explanation> kAll = {
      {"G1",
       "CUDA 12/13 ABI mismatch",
       "ImportError naming libcudart.so.12 or an undefined CUDA symbol, or a segfault at the first .cuda() call.",
       "Many wheels on PyPI were built against CUDA 12 while the Spark's driver stack is CUDA 13. pip never "
       "checks CUDA ABI, so a mismatch shows up only when the extension is imported or first launches a kernel. "
       "What actually breaks is a shared object that needs a CUDA library the loader cannot find, or two CUDA "
       "majors loaded into one interpreter.",
       "Reads torch/version.py and the dist-info records (no import), walks every shared object of the "
       "environment, resolves each CUDA library it needs the way ld.so would (RPATH/RUNPATH/$ORIGIN, the pip "
       "nvidia/*/lib dirs, LD_LIBRARY_PATH, default dirs) and collects the CUDA majors. FAIL: an unresolvable "
       "CUDA library, more than one CUDA major in one interpreter, or a CPU-only torch on a GPU host. WARN: a "
       "consistent CUDA 12 torch on a CUDA 13 host. PASS: CUDA 13 torch (+cu130, plain 2.11+, or an NGC build).",
       "Install torch from the cu130 index (pip install torch --index-url https://download.pytorch.org/whl/cu130) "
       "and rebuild or reinstall the extensions named in the FAIL against it - or use an NGC container, whose "
       "torch carries no +cu tag and is CUDA 13 from 25.09 on.",
       {"'cu12 wheels break on Spark': a consistent cu128/cu129 torch runs on GB10 through its "
        "sm_120 cubins and only prints a capability warning; mixing CUDA majors is what breaks.",
        "'Expect +cu130': from torch 2.11 the plain PyPI wheel is CUDA 13.0 with no local tag, and NGC "
        "builds (.nvYY.MM) never carry one: the version.py cuda field decides."},
       {}},
      {"G2",
       "flash-attn build and Unsloth auto-detect",
       "pip install flash-attn hangs or fails; or a run uses flash-attn although attn_implementation='sdpa' "
       "was asked for.",
       "There is no official aarch64/sm_121 flash-attn wheel, so bare pip falls back to a very long source "
       "build. NGC containers ship a working build, and Unsloth prefers flash-attn whenever it imports, "
       "ignoring the user's attention choice.",
       "Looks for flash_attn-*.dist-info: version, an NGC +YY.MM tag, direct_url.json (a source build), the "
       "ELF machine of flash_attn_2_cuda*.so against this host's, and its CUDA runtime against torch's. With "
       "unsloth-*.dist-info present too it WARNs and prints the override.",
       "Bare pip: skip flash-attn and use SDPA. To force SDPA under Unsloth while flash-attn is installed, "
       "make the import fail before Unsloth loads: put `import sys; sys.modules['flash_attn'] = None` before "
       "`import unsloth` (patching unsloth's HAS_FLASH_ATTENTION after import is not enough: each model "
       "module holds its own copy).",
       {"'No aarch64 flash-attn wheel': true for the official releases; third-party aarch64 cu130 "
        "wheels exist (mjun0812 prebuilt wheels, 2026-05). The monkeypatch is derived from Unsloth's source, "
        "not tested on hardware."},
       {}},
      {"G3",
       "UMA OOM below 128 GB",
       "Out of memory during load or training while nvidia-smi shows free memory - or [N/A] for memory.",
       "CPU and GPU share one pool. Page cache, mmap'd safetensors and the CUDA allocator all draw from it, "
       "and nvidia-smi sees none of that (on GB10 it reports no device memory at all). QLoRA can OOM earlier "
       "than bf16 LoRA because dequantisation adds transient allocations.",
       "Reads /proc/meminfo: MemTotal, MemAvailable (the budget), MemFree (the `free -g` 'free' "
       "column), page cache (Cached + Buffers - Shmem, what drop_caches can reclaim) and swap, "
       "and what the GPU reports for memory. A large page cache before a big load goes into the evidence.",
       "Between runs: `sparkops flush` (sync; echo 3 > /proc/sys/vm/drop_caches, as root). Size runs with "
       "`sparkops plan`, which budgets against MemAvailable minus a reserve and counts the load-time peak.",
       {"'A safetensors load doubles memory' (mmap + device copy): plausible on unified memory, but no source "
        "measures it; sparkops presents it as a rule of thumb.",
        "'nvidia-smi memory reads [N/A] on Spark': confirmed; NVML's memory query returns NOT_SUPPORTED "
        "on GB10, while per-process used memory still works."},
       {}},
      {"G4",
       "thermal throttling",
       "Throughput drops hours into a run, or the box reboots under sustained load.",
       "Long runs heat the SoC; the firmware lowers clocks (SW Thermal Slowdown, reason bit 0x20) and some "
       "units reboot or drop into a slow power-delivery state that sets no reason bit at all.",
       "Reads temperature, power draw, SM clock against its maximum and the clock-event reasons from NVML "
       "(nvidia-smi for fields NVML lacks). `sparkops sample`/`run` log throttle_start/throttle_end, "
       "pd_degraded (clock under 1400 MHz at high utilization with no reason bit), thermal_signature "
       "(temperature climbing while power stays flat) and hot (86 C and above).",
       "Sample beside every long run (`sparkops run` does it); before blaming the config, look at the thermal "
       "log at the slowdown (`sparkops analyze`). Improve airflow, cap clocks (nvidia-smi -lgc 0,2100 was "
       "reported to stop SW thermal slowdown at ~70% of 3003 MHz), or shorten runs; a PD-degraded state has "
       "been reported to clear only after removing AC power.",
       {"'~100 W sustained cap versus 240 W rated': no source gives either figure for GB10, and NVML "
        "reports no power limit on GB10, so sparkops uses the clock-event reasons and the temperature trend, "
        "and shows power only as a reading."},
       {}},
      {"G5",
       "bandwidth ceiling",
       "Memory-bound work (decode, RL rollouts) plateaus far below what the 273 GB/s spec promises.",
       "273 GB/s is the LPDDR5x peak; sustained reads are lower.",
       "Prints the planning figures with their sources; `sparkops bandwidth --model M` turns them into a "
       "decode tokens/s ceiling, and `--measure` measures this machine (CPU-side read benchmark).",
       "Budget from the measured band, not 273 GB/s; revise plans built on the spec figure.",
       {"'Measured 180-192 GB/s': no source for that figure was found; the one published GB10 "
        "measurement is 231-234 GB/s (a saturating-read kernel; decode reached 85-90% of it). sparkops shows "
        "both, labelled."},
       {}},
      {"G6",
       "global UMA contention",
       "A server's KV cache or a trainer's pages get evicted mid-run; nobody logs an OOM; a run slows down.",
       "The pool is global. An uncapped or near-capacity process (vLLM at its default utilization, an Ollama "
       "with several models loaded) competes with everything else. A small capped workload does not.",
       "Lists ML processes from the process table and NVML per-process memory, parses each one's cap from "
       "its flags and environment, and gives a verdict: capped (a fraction <= 0.5 or a byte cap <= half of "
       "MemTotal), near-capacity (above that, including a default like vLLM's 0.92), uncapped (no cap).",
       "Cap or stop uncapped/near-capacity servers before a long or full-pool run "
       "(vllm --gpu-memory-utilization 0.5; sglang --mem-fraction-static; OLLAMA_MAX_LOADED_MODELS=1). A "
       "small capped workload need not stop.",
       {"'vLLM's default gpu-memory-utilization is 0.9': it is 0.92 in current vLLM (per instance); "
        "0.9 was the older default.",
        "'A <4 GB LoRA coexists with vLLM capped at <=0.5': a rule of thumb from the field; no source was "
        "found for it."},
       {}},
      {"G7",
       "NVFP4 needs sm_121a kernels",
       "Switching an inference workload from FP8 to NVFP4 on the Spark makes it slower.",
       "The FP4 conversion and block-scaled MMA instructions exist only for arch-specific (sm_121a) and "
       "family-specific (sm_120f, which runs on 12.0 and 12.1) targets; generic sm_120 cubins or PTX fall "
       "back to slower paths.",
       "Reads the compute capability (NVML, else nvidia-smi); on Blackwell (10.x, 12.x) reads the .nv_fatbin "
       "entry headers of the FP4-relevant extensions (vLLM, flashinfer, sgl_kernel, TensorRT-LLM) without "
       "decompressing anything, and applies CUDA's per-entry rule: a generic sm_XY cubin runs on X.Z with "
       "Z >= Y, sm_XYa only on X.Y, sm_XYf on its family, PTX compute_XY is JIT-compiled on any later GPU. "
       "Judges each object, and the package by its kernel objects: code in a bundled communication/runtime "
       "library (nccl, mscclpp, nvshmem, cudart) does not count for the kernels. Standalone .cubin files "
       "(flashinfer-cubin) are read from their ELF e_flags. Reports per package: native cubins, PTX JIT "
       "only (slow first start, CUDA_CACHE_PATH), and NVFP4-capable (a/f 10.x/12.x) kernels for this GPU.",
       "Stay on FP8 unless the kernels you run target sm_121a or sm_120f.",
       {"'NVFP4 is ~32% slower': not found in sources; they report 7-25% slower for MoE in one case and "
        "'slower than INT4' in another."},
       {}},
      {"G8",
       "stale official playbooks",
       "An official DGX Spark playbook fails with nothing misconfigured locally.",
       "The stack moves faster than the playbooks; several have shipped broken.",
       "Cannot be checked offline: SKIP with the tracker's address "
       "(https://github.com/NVIDIA/dgx-spark-playbooks/issues).",
       "Read the playbook's open issues before an expensive run.",
       {},
       {"#2 (2025; taken down 2025-12-12): VLM fine-tuning playbook - docker build fails; withdrawn",
        // NOLINTNEXTLINE(bugprone-suspicious-missing-comma): one issue's text, split over two lines
        "#7 (2025-10-25): NCCL playbook pinned v2.28.3-1, which broke the nccl-tests build (docs moved to "
        "v2.28.9-1 on 2025-12-15)",
        "#12 (2025-10-30): wrong cd paths in the JAX and PyTorch fine-tune playbooks",
        "#14/#15 (2025-11-02): Unsloth playbook - wrong curl URL, TRL version error, missing hf_transfer",
        "#25 (2025-11-19): connect-two-sparks needs MTU 9000; all_gather busbw only ~19-21 GB/s",
        "#57 (2026-01-30): Unsloth playbook - 'Parameter' object has no attribute 'compress_statistics' "
        "(bitsandbytes 0.49.1)",
        "#68 (2026-03-22): SGLang - two different images named by two doc pages",
        "#75 (2026): Gemma 4 with vLLM + Ray - the NGC image lacks Gemma 4, the gemma4 image lacks Ray",
        "#79 (2026): Llama 3.3 70B only 4.0-4.2 tok/s (PR #91 added a 6.72 tok/s roofline)",
        "#90 (2026-07-26): LLaMA Factory prerequisites say CUDA 12.9 but the playbook installs cu130",
        "#102 (2026-08-17): NCCL playbook only ~3 GB/s busbw without NCCL_IB_HCA naming both RoCE devices",
        "#109 (2026-08-24): vLLM playbook container missing Ray"}},
      {"G9",
       "container vs bare pip",
       "A bare-pip environment breaks after an unrelated pip install; two 'identical' environments differ.",
       "Bare pip lets torch, Triton, xformers and transformers drift apart; nothing pins them to sm_121.",
       "Detects a container (/.dockerenv, /run/.containerenv, /proc/1/cgroup, NGC environment variables); "
       "compares the installed torch/triton/xformers/transformers versions with the pins the others "
       "declare, in bare pip and inside a container, with each Requires-Dist marker (platform_machine, "
       "python_version, ...) evaluated for the judged machine (--machine).",
       "Prefer an NGC PyTorch container (its PIP_CONSTRAINT pins the stack) or Unsloth's container; if bare "
       "pip is unavoidable, follow NVIDIA's install order and use --no-deps for Unsloth.",
       {"cgroup v2 with a private cgroup namespace shows only '0::/' in /proc/1/cgroup, so a container can "
        "look like bare metal; sparkops also checks the other markers."},
       {}},
      {"G10",
       "two-Spark parallelism",
       "A tensor-parallel launch across two Sparks hangs, errors, or runs slower than one box.",
       "The ConnectX-7 link (~19-21 GB/s all_gather busbw measured with MTU 9000) carries gradient and "
       "parameter sync well, but tensor parallelism all-reduces inside every layer.",
       "Reads --config files (accelerate YAML, DeepSpeed JSON, launch scripts) and launcher processes/"
       "environment: FAIL when a training config spans machines with TP > 1, WARN for pipeline parallelism "
       "across boxes, INFO for cross-box TP in inference, PASS for DDP/FSDP.",
       "Train across two Sparks with DDP or FSDP; keep tensor parallelism inside one box.",
       {"'Never TP across two Sparks': for training, yes. For inference, cross-box TP=2 is routine "
        "(NVIDIA's own vLLM + Ray playbook), so sparkops reports it as INFO, not FAIL."},
       {}},
      {"G11",
       "platform: driver, kernel, kernel log, pstore",
       "The whole host freezes under memory pressure (no OOM kill, no panic, a power cycle needed), or CUDA "
       "graphs or NCCL between two Sparks fail on one machine and not another.",
       "On GB10 the NVIDIA driver's allocations come from the same pool as the CPU's. When they fail the kernel "
       "log shows `NVRM: ... NV_ERR_NO_MEMORY`, and the host may wedge within minutes. Some driver and kernel "
       "versions carry known defects: 590.x (a CUDA-graph defect), kernels without a CMA reservation (NCCL "
       "ENOMEM between two Sparks), 6.17.0-1008 (a DOE-mailbox stuck state).",
       "Reads /proc/driver/nvidia/version (and NVML's version where it differs), /proc/sys/kernel/osrelease, "
       "the kernel log since boot (/dev/kmsg: root or kernel.dmesg_restrict=0) for NVRM NV_ERR_NO_MEMORY, Xid, "
       "OOM-kill, hung-task and lockup records, CmaTotal in /proc/meminfo with --pair, and /sys/fs/pstore plus "
       "/var/lib/systemd/pstore. FAIL: NVRM no-memory records this boot, CmaTotal 0 with --pair. WARN: 590.x, "
       "module and NVML versions differ, 6.17.0-1008, Xid/OOM-kill/hung-task/lockup records, pstore records "
       "waiting. INFO: the kernel log is not readable. PASS: none of these.",
       "After NV_ERR_NO_MEMORY: reboot before a long run and keep the job well below the pool (`sparkops plan`, "
       "the memory guard of `sparkops run`). Stay on the 580.x driver. Read and clear pstore records.",
       {"'NV_ERR_NO_MEMORY always means a crash is coming': a GB10 owner counted 55 such lines at rest over "
        "three days, and runs that logged one still served (vllm-project/vllm#56824); treat it as a precursor "
        "to act on, not a certainty."},
       {}},
      {"ladder",
       "the OOM ladder",
       "A job OOMs on unified memory.",
       "Headroom is taken by page cache, by the load-time transient, by activations at long packing "
       "lengths, or by the method itself.",
       "`sparkops oom [MODEL] [plan options] [--log FILE]` computes each rung for your run: what a flush "
       "would free now, the largest pack length then batch that fits, and which method fits.",
       "Work the rungs in order; each is more disruptive than the last. Reducing batch size is never step 1.",
       {"The load-time doubling (mmap'd checkpoint + device copy) is a rule of thumb; no source measures it."},
       {"1. Flush the page cache (sync; echo 3 > /proc/sys/vm/drop_caches; root; between runs).",
        "2. Shorten the packing length first, then the micro-batch.",
        "3. Downgrade the method: full -> bf16 LoRA -> QLoRA. A QLoRA OOM during load or dequantisation is not "
        "proof the model does not fit: bf16 LoRA may fit when the planner says so.",
        "4. Only then: a smaller model, or two Sparks with DDP/FSDP (never tensor parallelism for training)."}},
  };
  return kAll;
}

}  // namespace sparkops

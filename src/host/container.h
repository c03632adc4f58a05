#pragma once
/// Container and host identity for preflight G2/G9 (docs/checks.md, G9), read under --root.
#include <optional>
#include <string>
#include <vector>

#include "host/host_view.h"

namespace sparkops {

struct ContainerInfo {
  bool in_container = false;
  std::string engine;                ///< "docker", "podman", "kubernetes", "containerd", "lxc", ...
  std::vector<std::string> evidence; ///< what was read ("/.dockerenv exists", ...)
  std::string ngc_product;           ///< NVIDIA_PRODUCT_NAME ("PyTorch")
  std::string ngc_release;           ///< NVIDIA_PYTORCH_VERSION / NGC tag ("25.10")
  std::string pip_constraint;        ///< PIP_CONSTRAINT (NGC pins torch, triton, ...)
};

/// Pure: which engine a /proc/1/cgroup text names ("" when none; cgroup v2 "0::/" names none).
std::string ParseCgroupEngine(std::string_view cgroup);

/// /.dockerenv, /run/.containerenv, env `container=`, /proc/1/cgroup, /proc/self/mountinfo, and
/// the NGC variables from ctx.env (else /proc/1/environ when readable).
ContainerInfo DetectContainer(const HostView& ctx);

/// Whether an NVIDIA kernel driver is loaded on the host (/proc/driver/nvidia/version under
/// --root): a GPU host even when NVML/nvidia-smi cannot be read. The version line when present.
std::optional<std::string> NvidiaDriverVersionLine(const HostFs& fs);

/// The CUDA toolkit under --root: /usr/local/cuda/version.json ("cuda": {"version": "13.0.48"}),
/// else version.txt ("CUDA Version 12.2.140"), else the versioned dir /usr/local/cuda links to
/// ("cuda-13.0"), else the major of lib64/libcudart.so.N. Returns {version, where it came from};
/// absent when none of these exists (the version is then unknown, never guessed).
struct ToolkitVersion {
  std::string version, file;
};
std::optional<ToolkitVersion> ReadCudaToolkitVersion(const HostFs& fs);
/// Pure: the version from version.json text; absent when missing or malformed.
std::optional<std::string> ParseCudaVersionJson(std::string_view text);

/// This machine's `uname -m` ("aarch64", "x86_64").
std::string UnameMachine();

}  // namespace sparkops

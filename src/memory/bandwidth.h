#pragma once
/// G5: decode throughput is bounded by memory bandwidth: tokens/s <= bandwidth / bytes read per
/// token (every active weight once per token, KV cache not counted: a short-context ceiling).
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "memory/model_spec.h"

namespace sparkops::memory {

/// Bytes per weight for a decode dtype: bf16/fp16 2, fp8/int8 1, nf4 4.127 bits, mxfp4 4.25 bits
/// (4-bit values + one 8-bit scale per 32), fp32 4. Input error naming --dtype otherwise.
Result<double> DecodeBytesPerParam(std::string_view dtype);

/// Weights read per decoded token: active block linears + norms + the LM head (V*h, tied or not);
/// the embedding lookup reads one row and is not counted.
double BytesPerToken(const ModelSpec& spec, double bytes_per_param);

struct BandwidthFigure {
  std::string label;   ///< "quoted figure (no source found)", "measured, antirez/ds4#773", "this machine (CPU-side)"
  double gb_per_s = 0; ///< decimal GB/s
};
/// The labelled reference figures: quoted 180 and 192 (no source found), published 231 and 234, spec 273.
std::vector<BandwidthFigure> ReferenceBandwidths();

/// Multi-threaded sequential read of a 256 MiB buffer for about `seconds` (CPU cores reading DRAM;
/// on GB10 the same LPDDR5X the GPU reads, but not the GPU's own figure). GB/s, decimal.
double MeasureReadBandwidth(double seconds = 0.6);

}  // namespace sparkops::memory

// torch/version.py (ParseTorchVersionPy) and the CUDA tag helpers applied to what it read.
#include "fuzz_util.h"
#include "host/torch_version.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = AsText(data, size);
  if (auto v = sparkops::ParseTorchVersionPy(text)) {
    if (v->cuda) (void)sparkops::CudaMajor(*v->cuda);
    (void)sparkops::CudaTag(v->version);
    (void)sparkops::NgcRelease(v->version);
  }
  (void)sparkops::CudaMajor(text);
  (void)sparkops::CudaTag(text);
  (void)sparkops::NgcRelease(text);
  return 0;
}

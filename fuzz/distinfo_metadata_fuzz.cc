// dist-info METADATA (ParseMetadata, ParseRequirement) and the version helpers used on what it
// holds (SatisfiesSpec, CompareVersions, PublicVersion, NormalizeName, ParseDistDirName).
#include "fuzz_util.h"
#include "host/distinfo.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = AsText(data, size);
  if (auto m = sparkops::ParseMetadata(text, "METADATA")) {
    for (const auto& r : m->requires_dist) {
      (void)sparkops::SatisfiesSpec(m->version, r.spec);
      (void)sparkops::NormalizeName(r.name);
    }
    FUZZ_CHECK(sparkops::CompareVersions(m->version, m->version) == 0);
  }
  (void)sparkops::ParseRequirement(text);
  (void)sparkops::ParseDistDirName(text);
  (void)sparkops::PublicVersion(text);
  (void)sparkops::NormalizeName(text);
  size_t half = size / 2;
  (void)sparkops::SatisfiesSpec(text.substr(0, half), text.substr(half));
  const int ab = sparkops::CompareVersions(text.substr(0, half), text.substr(half));
  const int ba = sparkops::CompareVersions(text.substr(half), text.substr(0, half));
  FUZZ_CHECK((ab < 0) == (ba > 0) && (ab == 0) == (ba == 0));
  return 0;
}

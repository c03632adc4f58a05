// ReadElf (the dynamic section through libelf, bounded) on any bytes written to a file, plus
// the fatbin scan of the same bytes: an error naming the file or a result, never a crash.
#include <unistd.h>

#include <cstdio>
#include <string>

#include "fuzz_util.h"
#include "host/elf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/sparkops_fuzz_elf_" + std::to_string(getpid()) + ".so";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  auto info = sparkops::ReadElf(path);
  if (info) FUZZ_CHECK(info->elf_class == 32 || info->elf_class == 64);
  else FUZZ_CHECK(info.error().message.find(path) != std::string::npos);
  (void)sparkops::ScanFatbinFile(path);
  (void)sparkops::ReadFatbinSection(path, 1 << 16);
  return 0;
}

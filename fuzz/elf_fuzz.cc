// ReadElf (the headers and the dynamic section through host/elf_headers.h, bounded preads) on any bytes written to a
// file, plus the fatbin scan of the same bytes: an error naming the file or a result, never a crash. The "file" is an
// in-memory one (memfd, opened by its /proc/self/fd path): a real file in /tmp cost a disk round trip per input and
// held this target to a few hundred executions a second.
#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include "fuzz_util.h"
#include "host/elf.h"
#include "host/elf_headers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const int fd = memfd_create("sparkops_fuzz_elf", 0);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (fd < 0 || ftruncate(fd, 0) != 0) return 0;
  if (size > 0 && pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) return 0;
  auto info = sparkops::ReadElf(path);
  if (info) FUZZ_CHECK(info->elf_class == 32 || info->elf_class == 64);
  else FUZZ_CHECK(info.error().message.find(path) != std::string::npos);
  // The same bytes from memory: the parser gives the same answer whatever the source.
  sparkops::MemoryBytes mem(AsText(data, size));
  auto layout = sparkops::ParseElfLayout(mem, path, {});
  auto same = layout ? sparkops::ReadDynamicInfo(mem, *layout, path, {})
                     : sparkops::Result<sparkops::ElfInfo>(std::unexpected(layout.error()));
  FUZZ_CHECK(same.has_value() == info.has_value());
  if (info)
    FUZZ_CHECK(same->needed == info->needed && same->soname == info->soname && same->has_fatbin == info->has_fatbin);
  else FUZZ_CHECK(same.error().message == info.error().message);
  (void)sparkops::ScanFatbinFile(path);
  (void)sparkops::ReadFatbinSection(path, 1 << 16);
  return 0;
}

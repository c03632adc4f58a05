#pragma once
/// The ELF header parser behind ReadElf, ScanFatbinFile and ReadFatbinSection (host/elf.h): the
/// file header, the section header table, section names and the `.dynamic` section with its
/// string table, read as small bounded ranges from a ByteSource (pread on a file, or bytes in
/// memory for tests and fuzzing). Nothing is mapped: one open per object, a handful of preads of
/// at most a few KiB each (the section header table, .dynamic, the strings it names).
///
/// Untrusted input: every offset and count read from the file is checked against the file size and
/// the ElfLimits before anything is allocated; sums and products are overflow-checked. Both
/// classes (ELF32, ELF64) and both byte orders are handled (gABI, "ELF Header" and "Sections";
/// the extended numbering of e_shnum/e_shstrndx through section 0 included).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "host/elf.h"

namespace sparkops {

/// Random-access bytes of one object.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  /// Total size in bytes.
  virtual uint64_t size() const = 0;
  /// Copies [off, off + n) to `dst`; false when the range is not wholly inside the source or
  /// the read fails (a file that shrank meanwhile).
  virtual bool Read(uint64_t off, void* dst, size_t n) = 0;
};

/// Bytes held in memory (tests, fuzz targets).
class MemoryBytes final : public ByteSource {
 public:
  explicit MemoryBytes(std::string_view d) : d_(d) {}
  uint64_t size() const override { return d_.size(); }
  bool Read(uint64_t off, void* dst, size_t n) override;

 private:
  std::string_view d_;
};

/// An open regular file read with pread; owns the descriptor.
class FileBytes final : public ByteSource {
 public:
  /// Opens `path` (O_NONBLOCK, so a FIFO cannot block the open) and checks that it is a regular
  /// file no larger than `max_bytes`: NotFound when missing, an Input error naming the file for
  /// a FIFO, a device (/dev/zero), a directory or an oversized file.
  static Result<FileBytes> Open(const std::string& path, uint64_t max_bytes);
  FileBytes(FileBytes&& o) noexcept : fd_(o.fd_), size_(o.size_) { o.fd_ = -1; }
  FileBytes& operator=(FileBytes&&) = delete;
  ~FileBytes() override;
  uint64_t size() const override { return size_; }
  bool Read(uint64_t off, void* dst, size_t n) override;

 private:
  FileBytes(int fd, uint64_t size) : fd_(fd), size_(size) {}
  int fd_;
  uint64_t size_;
};

/// One section header, in host byte order.
struct ElfSection {
  uint32_t name = 0;  ///< offset into the section-name string table
  uint32_t type = 0;  ///< SHT_*
  uint64_t offset = 0, size = 0;  ///< bytes in the file (size 0 for SHT_NOBITS in effect)
  uint32_t link = 0;
  uint64_t entsize = 0;
};

/// What the file header and section header table say.
struct ElfLayout {
  int elf_class = 0;      ///< 32 or 64
  bool big_endian = false;
  uint16_t machine = 0;   ///< e_machine
  std::vector<ElfSection> sections;  ///< index 0 included (SHT_NULL)
  std::optional<size_t> fatbin;      ///< index of the section named `.nv_fatbin`
  std::optional<size_t> dynamic;     ///< index of the first SHT_DYNAMIC section
};

/// Reads the file header, the section header table and the section names (the name table read
/// once). `name` is the file named in errors. Input error for anything damaged: not ELF, an
/// unknown class or byte order, a truncated header or table, a table past the end of the file,
/// a section count over `limits.max_sections`, a name offset beyond the name table.
Result<ElfLayout> ParseElfLayout(ByteSource& src, const std::string& name, const ElfLimits& limits);

/// ElfInfo (class, machine, DT_NEEDED/RPATH/RUNPATH/SONAME, has_fatbin) from a parsed layout:
/// reads `.dynamic` and the strings it names from its linked string table. Input error for a
/// .dynamic with an implausible entry size or count, an sh_link out of range, a string offset
/// beyond the string table, or a string with no NUL before the table's end.
Result<ElfInfo> ReadDynamicInfo(ByteSource& src, const ElfLayout& layout, const std::string& name,
                                const ElfLimits& limits);

}  // namespace sparkops

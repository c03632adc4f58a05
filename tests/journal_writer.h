#pragma once
// A tiny writer of systemd journal files (JOURNAL_FILE_FORMAT) for tests of host/journal_file.h:
// the header, DATA objects, ENTRY objects and a chain of ENTRY_ARRAY objects, in the regular or
// the compact layout. Hashes, the hash tables and FIELD objects are left out (a reader walking the
// entry arrays does not use them); everything else is laid out as systemd writes it.
#include <cstdint>
#include <string>
#include <vector>

namespace sparkops::testing {

struct JournalEntryIn {
  uint64_t realtime_us = 0;
  std::string boot_id;              ///< 32 hex digits
  std::vector<std::string> fields;  ///< "FIELD=value"
  std::vector<bool> compressed;     ///< per field: flag the DATA object compressed (LZ4), same size
};

class JournalWriter {
 public:
  explicit JournalWriter(bool compact) : compact_(compact) {
    f_.assign(272, '\0');
    f_.replace(0, 8, "LPKSHHRH");
    Put(12, compact ? 16 : 0, 4);  // incompatible_flags: COMPACT
    f_[16] = 2;                    // state: archived
    Put(88, 272, 8);               // header_size
  }
  /// Entry arrays of `per_array` slots (the last one's unused slots stay 0).
  std::string Build(const std::vector<JournalEntryIn>& entries, size_t per_array = 4) {
    std::vector<uint64_t> offsets;
    for (const auto& e : entries) {
      std::vector<uint64_t> data;
      for (size_t i = 0; i < e.fields.size(); ++i) {
        const bool z = i < e.compressed.size() && e.compressed[i];
        const uint64_t head = compact_ ? 72 : 64;
        uint64_t off = Object(1, z ? 2 : 0, head + e.fields[i].size());
        f_.replace(off + head, e.fields[i].size(), e.fields[i]);
        Put(off + 56, 1, 8);  // n_entries
        data.push_back(off);
      }
      const uint64_t stride = compact_ ? 4 : 16;
      uint64_t off = Object(3, 0, 64 + stride * data.size());
      Put(off + 16, offsets.size() + 1, 8);  // seqnum
      Put(off + 24, e.realtime_us, 8);
      Put(off + 32, 1000 + offsets.size(), 8);  // monotonic
      for (size_t i = 0; i < 16 && 2 * i + 1 < e.boot_id.size(); ++i)
        f_[off + 40 + i] = static_cast<char>(std::stoi(e.boot_id.substr(2 * i, 2), nullptr, 16));
      for (size_t i = 0; i < data.size(); ++i) {
        Put(off + 64 + i * stride, data[i], compact_ ? 4 : 8);
        Put(data[i] + 40, off, 8);  // the DATA object's entry_offset: its (one) entry
      }
      offsets.push_back(off);
    }
    const uint64_t item = compact_ ? 4 : 8;
    uint64_t prev = 0;
    for (size_t at = 0; at < offsets.size() || at == 0; at += per_array) {
      uint64_t off = Object(6, 0, 24 + item * per_array);
      for (size_t i = 0; i < per_array && at + i < offsets.size(); ++i)
        Put(off + 24 + i * item, offsets[at + i], static_cast<int>(item));
      if (prev) Put(prev + 16, off, 8);
      else Put(176, off, 8);  // header.entry_array_offset
      prev = off;
      if (offsets.empty()) break;
    }
    Put(152, offsets.size(), 8);  // n_entries
    Put(136, prev, 8);            // tail_object_offset: the last object written
    Put(96, f_.size() - 272, 8);  // arena_size
    return f_;
  }
  void Put(uint64_t at, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) f_[at + static_cast<uint64_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xff);
  }

 private:
  uint64_t Object(uint8_t type, uint8_t flags, uint64_t size) {
    uint64_t off = f_.size();
    f_.append((size + 7) / 8 * 8, '\0');
    f_[off] = static_cast<char>(type);
    f_[off + 1] = static_cast<char>(flags);
    Put(off + 8, size, 8);
    return off;
  }
  bool compact_;
  std::string f_;
};

}  // namespace sparkops::testing

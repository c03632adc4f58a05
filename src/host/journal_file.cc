#include "host/journal_file.h"

#include <algorithm>
#include <cstring>

#include "base/strings.h"

namespace sparkops {

namespace {

constexpr uint64_t kHeaderMin = 208;  ///< up to tail_entry_monotonic (systemd's HEADER_SIZE_MIN)
constexpr uint32_t kCompact = 1u << 4, kKnownIncompatible = 0x1f;
constexpr uint8_t kData = 1, kEntry = 3, kEntryArray = 6;
constexpr uint8_t kCompressedMask = 0x7;
constexpr size_t kMaxArrays = 1u << 20;     ///< entry arrays followed per file at most
constexpr size_t kMaxItemReads = 1u << 24;  ///< DATA items read per file at most (entries may repeat)

uint64_t Le(std::string_view f, uint64_t at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(f[at + static_cast<uint64_t>(i)]);
  return v;
}

struct File {
  std::string_view f;
  uint64_t header_size = 0;
  bool compact = false;
  /// The object at `off` of `type`: its size, or 0 when it is not a valid object there.
  uint64_t Object(uint64_t off, uint8_t type, uint64_t min_size) const {
    if (off % 8 != 0 || off < header_size || off > f.size() || f.size() - off < 16) return 0;
    if (static_cast<uint8_t>(f[off]) != type) return 0;
    uint64_t size = Le(f, off + 8, 8);
    if (size < min_size || size > f.size() - off) return 0;
    return size;
  }
};

std::string Hex(std::string_view bytes) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (char c : bytes) s += d[(static_cast<unsigned char>(c) >> 4) & 0xf], s += d[static_cast<unsigned char>(c) & 0xf];
  return s;
}

}  // namespace

Result<JournalScan> ScanJournal(std::string_view f, std::string_view want_boot) {
  if (f.size() < kHeaderMin || f.substr(0, 8) != "LPKSHHRH")
    return InputError("not a journal file (no LPKSHHRH header)");
  const uint32_t incompatible = static_cast<uint32_t>(Le(f, 12, 4));
  if (incompatible & ~kKnownIncompatible)
    return InputError("journal file uses an incompatible feature this reader does not know (flags " +
                      std::to_string(incompatible) + ")");
  File j{f, Le(f, 88, 8), (incompatible & kCompact) != 0};
  if (j.header_size < kHeaderMin || j.header_size > f.size()) return InputError("journal header size out of bounds");
  std::string want;
  for (char c : want_boot)
    if (c != '-') want += static_cast<char>(c >= 'A' && c <= 'F' ? c - 'A' + 'a' : c);

  JournalScan out;
  const uint64_t item_size = j.compact ? 4 : 8, data_payload = j.compact ? 72 : 64;
  uint64_t array = Le(f, 176, 8), last_array = 0;
  size_t arrays = 0, entries = 0, item_reads = 0;
  while (array != 0) {
    if (array <= last_array || ++arrays > kMaxArrays) {  // the chain only moves forward
      ++out.bad;
      break;
    }
    last_array = array;
    const uint64_t asize = j.Object(array, kEntryArray, 24);
    if (asize == 0) {
      ++out.bad;
      break;
    }
    const uint64_t n = (asize - 24) / item_size;
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t entry = Le(f, array + 24 + i * item_size, static_cast<int>(item_size));
      if (entry == 0) break;  // the rest of a preallocated array is unused
      if (++entries > kJournalMaxEntries) {
        out.capped = true;
        return out;
      }
      const uint64_t esize = j.Object(entry, kEntry, 64);
      if (esize == 0) {
        ++out.bad;
        continue;
      }
      JournalRecord r;
      r.realtime_us = Le(f, entry + 24, 8);
      r.boot_id = Hex(f.substr(entry + 40, 16));
      if (!want.empty() && r.boot_id != want) continue;
      const uint64_t stride = j.compact ? 4 : 16;
      uint64_t items = (esize - 64) / stride;
      if (items > kJournalMaxItems) items = kJournalMaxItems, out.capped = true;
      item_reads += items;
      if (item_reads > kMaxItemReads) {
        out.capped = true;
        return out;
      }
      bool kernel = false, has_message = false, compressed = false;
      for (uint64_t k = 0; k < items; ++k) {
        const uint64_t data = Le(f, entry + 64 + k * stride, j.compact ? 4 : 8);
        const uint64_t dsize = j.Object(data, kData, data_payload);
        if (dsize == 0) {
          ++out.bad;
          continue;
        }
        if (static_cast<uint8_t>(f[data + 1]) & kCompressedMask) {
          compressed = true;
          continue;
        }
        std::string_view payload = f.substr(data + data_payload, dsize - data_payload);
        if (payload == "_TRANSPORT=kernel") kernel = true;
        else if (StartsWith(payload, "MESSAGE=")) {
          payload.remove_prefix(8);
          r.message.assign(payload.substr(0, kJournalMaxMessage));
          has_message = true;
        }
      }
      if (!kernel) continue;
      if (!has_message) {
        if (compressed) ++out.compressed;
        continue;
      }
      out.records.push_back(std::move(r));
      if (out.records.size() > 2 * kJournalMaxKept)  // keep the last ones, amortised
        out.records.erase(out.records.begin(), out.records.end() - static_cast<long>(kJournalMaxKept));
    }
    array = Le(f, array + 16, 8);
  }
  if (out.records.size() > kJournalMaxKept)
    out.records.erase(out.records.begin(), out.records.end() - static_cast<long>(kJournalMaxKept));
  return out;
}

std::vector<std::string> ListSystemJournals(const HostFs& fs) {
  std::vector<std::string> out;
  auto dirs = fs.List("/var/log/journal", 64);
  if (!dirs) return out;
  std::sort(dirs->begin(), dirs->end());
  for (const auto& d : *dirs) {
    auto names = fs.List("/var/log/journal/" + d, 4096);
    if (!names) continue;
    std::sort(names->begin(), names->end());
    for (const auto& n : *names) {
      if (out.size() >= 256) return out;
      const bool system =
          n == "system.journal" || (StartsWith(n, "system@") && (EndsWith(n, ".journal") || EndsWith(n, ".journal~")));
      if (system) out.push_back("/var/log/journal/" + d + "/" + n);
    }
  }
  return out;
}

}  // namespace sparkops

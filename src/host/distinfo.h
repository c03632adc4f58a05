#pragma once
/// Installed-package metadata (`*.dist-info`, legacy `*.egg-info`), parsed without importing
/// anything (docs/checks.md, "Finding the Python environment"). All parsers are pure.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace sparkops {

/// One `Requires-Dist:` line: "nvidia-cuda-runtime-cu12==12.8.57; platform_system == \"Linux\"".
struct Requirement {
  std::string name;    ///< as written ("nvidia-cuda-runtime-cu12")
  std::string spec;    ///< version specifier, parentheses removed ("==12.8.57"), may be empty
  std::string extras;  ///< "cublas,cudart" from "cuda-toolkit[cublas,cudart]"
  std::string marker;  ///< environment marker after ';', may be empty
};

/// METADATA / PKG-INFO headers (RFC 822 style; the body after the first blank line is ignored).
struct Metadata {
  std::string name, version;
  std::vector<Requirement> requires_dist;
};

/// Input error naming `file` and the field when Name or Version is missing.
Result<Metadata> ParseMetadata(std::string_view text, const std::string& file);
/// Parses one requirement string (the value of a Requires-Dist header).
Requirement ParseRequirement(std::string_view s);

/// One RECORD row: path relative to site-packages, hash ("sha256=..."), size (absent when empty).
struct RecordEntry {
  std::string path, hash;
  std::optional<uint64_t> size;
};
/// One RECORD row as views, valid only during the ScanRecord callback that receives it.
struct RecordRowView {
  std::string_view path, hash;
  std::optional<uint64_t> size;
};
/// RECORD is CSV (fields may be double-quoted, "" escapes a quote, a quoted field may hold a line
/// break). Streams each row to `row` without copying plain rows (a venv holds ~100k of them);
/// returns the row count. Input error naming `file` and the line on a malformed row; at most
/// `max_rows` rows.
Result<size_t> ScanRecord(std::string_view text, const std::string& file,
                          const std::function<void(const RecordRowView&)>& row, size_t max_rows = 200000);
/// ScanRecord's rows, copied.
Result<std::vector<RecordEntry>> ParseRecord(std::string_view text, const std::string& file, size_t max_rows = 200000);

/// direct_url.json: written only for URL, VCS or local-path installs (a source build).
struct DirectUrl {
  std::string url;
  bool editable = false;
  std::string vcs;  ///< "git" for a VCS install, else ""
};
Result<DirectUrl> ParseDirectUrl(std::string_view text, const std::string& file);

/// PEP 503 normalised name: lower case, runs of "-_." become "-" ("Flash_Attn" -> "flash-attn").
std::string NormalizeName(std::string_view name);
/// Splits "torch-2.9.1+cu130.dist-info" / "torch-1.13.0a0+gitunknown.egg-info" into name and
/// version (version "" for an egg-info without one). nullopt for other names.
struct DistDirName {
  std::string name, version;
  bool egg = false;
};
std::optional<DistDirName> ParseDistDirName(std::string_view dirname);

/// The public part of a version (before '+'): "1.13.0a0+gitunknown" -> "1.13.0a0".
std::string_view PublicVersion(std::string_view v);
/// Compares public versions numerically by release segments ("2.10" > "2.9"); pre-release
/// letters sort before the plain release ("2.11.0a0" < "2.11.0"). -1, 0, 1.
int CompareVersions(std::string_view a, std::string_view b);
/// True when `version` satisfies a simple specifier list ("==2.9.1", ">=2.4,<2.6", "~=..." is
/// treated as >=). Unparsable specifiers count as satisfied (nullopt would hide nothing).
std::optional<bool> SatisfiesSpec(std::string_view version, std::string_view spec);

}  // namespace sparkops

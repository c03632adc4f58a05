#pragma once
/// PEP 508 environment markers ("platform_machine == \"x86_64\" and python_version >= \"3.10\""),
/// evaluated for the machine preflight judges (its --machine, not necessarily this host). Pure.
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace sparkops {

/// Marker variables of the judged environment. A variable that is absent is unknown: a
/// comparison on it is unknown, and unknowns combine three-valued (false and unknown = false).
struct MarkerEnv {
  std::map<std::string, std::string, std::less<>> vars;  ///< "platform_machine" -> "aarch64"
};

/// The marker variables of a Linux CPython on `machine` ("aarch64", "x86_64"), with
/// `python_version` ("3.12") when known (else python_version/python_full_version are unknown).
/// `extra` is "" (a requirement for an optional extra does not apply to the installed set).
MarkerEnv LinuxMarkerEnv(std::string_view machine, std::string_view python_version);

/// Evaluates `marker` (the text after ';' in a Requires-Dist line). true/false, or nullopt when
/// it depends on an unknown variable or does not parse (nesting bounded at 32 levels).
/// Version operators (<, <=, >, >=, ~=, ==, !=) compare as versions when both sides are
/// versions, else as strings; `in` / `not in` test substrings.
std::optional<bool> EvaluateMarker(std::string_view marker, const MarkerEnv& env);

/// "3.12" from a site-packages path ".../lib/python3.12/site-packages"; "" when none.
std::string PythonVersionFromSiteDir(std::string_view site_dir);

}  // namespace sparkops

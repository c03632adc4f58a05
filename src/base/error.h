#pragma once
/// Expected failures are values: every fallible function returns `Result<T>`;
/// only the top level (src/cli/run.cc) turns an Error into an exit code.
#include <expected>
#include <string>
#include <utility>

namespace sparkops {

/// What went wrong, for a person: names the file (or flag) and the field.
struct Error {
  enum class Kind {
    kInput,     ///< bad input file or flag: exit 2
    kNotFound,  ///< the thing is not there (often not an error for the caller)
    kIo,        ///< the machine refused (read/write failed)
    kProblem,   ///< a finding, not a failure of sparkops: exit 1
  };
  Kind kind = Kind::kInput;
  std::string message;
};

template <typename T>
using Result = std::expected<T, Error>;

inline std::unexpected<Error> Fail(Error::Kind kind, std::string message) {
  return std::unexpected<Error>(Error{kind, std::move(message)});
}
inline std::unexpected<Error> InputError(std::string message) { return Fail(Error::Kind::kInput, std::move(message)); }
inline std::unexpected<Error> NotFound(std::string message) { return Fail(Error::Kind::kNotFound, std::move(message)); }
inline std::unexpected<Error> IoError(std::string message) { return Fail(Error::Kind::kIo, std::move(message)); }

/// Exit codes used everywhere (README, "Exit codes"): 0 fine, 1 problem found, 2 usage/input error.
inline constexpr int kExitOk = 0;
inline constexpr int kExitProblem = 1;
inline constexpr int kExitUsage = 2;

}  // namespace sparkops

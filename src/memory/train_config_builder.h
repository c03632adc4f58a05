#pragma once
/// Internal to the `plan --from` parsers (train_config.cc, accelerate_config.cc): the flattened
/// config and the builder that checks each value and records what was taken or assumed.
#include <fmt/format.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/strings.h"
#include "memory/train_config.h"

namespace sparkops::memory::detail {

/// A flattened config: "a.b.c" -> scalar, or the scalars of a list.
struct Flat {
  std::map<std::string, std::string> scalars;
  std::map<std::string, std::vector<std::string>> lists;
  bool Has(const std::string& k) const { return scalars.count(k) || lists.count(k); }
  std::optional<std::string> Get(const std::string& k) const {
    auto it = scalars.find(k);
    if (it == scalars.end()) return std::nullopt;
    return it->second;
  }
};

inline std::optional<bool> Bool(const std::string& v) {
  const std::string l = ToLower(Trim(v));
  if (l == "true" || l == "yes" || l == "on" || l == "1") return true;
  if (l == "false" || l == "no" || l == "off" || l == "0") return false;
  return std::nullopt;
}

/// Builds the TrainConfig, checking each value's kind and naming the key when it is wrong.
class Builder {
 public:
  Builder(const Flat& f, std::string file, TrainConfig& c) : f_(f), file_(std::move(file)), c_(c) {}

  /// A positive whole number under `key` -> `flag`.
  Result<bool> Count(const std::string& key, const char* flag) {
    auto v = f_.Get(key);
    if (!v || *v == "null") return false;
    auto n = ParseInt(Trim(*v));
    if (!n || *n < 1 || *n > (1 << 24))
      return InputError(fmt::format("{}: field '{}': expected a whole number of at least 1, got '{}'", file_, key, *v));
    Take(flag, std::to_string(*n), key);
    return true;
  }
  Result<std::optional<bool>> Flag(const std::string& key) {
    auto v = f_.Get(key);
    if (!v || *v == "null") return std::optional<bool>();
    auto b = Bool(*v);
    if (!b) return InputError(fmt::format("{}: field '{}': expected true or false, got '{}'", file_, key, *v));
    return b;
  }
  Result<bool> OnOff(const std::string& key, const char* flag) {
    auto b = Flag(key);
    if (!b) return std::unexpected(b.error());
    if (!*b) return false;
    Take(flag, **b ? "on" : "off", key);
    return true;
  }
  Result<bool> Fraction(const std::string& key, const char* flag) {
    auto v = f_.Get(key);
    if (!v || *v == "null") return false;
    auto d = ParseDouble(Trim(*v));
    if (!d || !(*d >= 0 && *d < 1))
      return InputError(fmt::format("{}: field '{}': expected a probability in [0, 1), got '{}'", file_, key, *v));
    Take(flag, fmt::format("{:g}", *d), key);
    return true;
  }
  /// A list (or one comma-separated scalar) of module names under `key`.
  std::vector<std::string> Names(const std::string& key) const {
    if (auto it = f_.lists.find(key); it != f_.lists.end()) return it->second;
    if (auto v = f_.Get(key); v && *v != "null") {
      std::vector<std::string> out;
      for (auto p : Split(*v, ','))
        if (!Trim(p).empty()) out.emplace_back(Trim(p));
      return out;
    }
    return {};
  }
  void Take(const char* flag, const std::string& value, const std::string& key) {
    c_.taken.push_back({flag, value, key});
  }
  void Assume(std::string what) { c_.assumed.push_back(std::move(what)); }
  bool Took(std::string_view flag) const {
    for (const auto& t : c_.taken)
      if (t.flag == flag) return true;
    return false;
  }
  /// The model named under `key`, if any (the first key found is the one reported).
  void Model(const std::string& key) {
    if (auto v = f_.Get(key); v && *v != "null" && !Trim(*v).empty()) AddModel(std::string(Trim(*v)), key);
  }
  void AddModel(const std::string& name, const std::string& key) {
    if (c_.models.empty()) c_.model_key = key;
    c_.models.push_back(name);
  }
  const Flat& flat() const { return f_; }
  const std::string& file() const { return file_; }

 private:
  const Flat& f_;
  std::string file_;
  TrainConfig& c_;
};

#define SPARKOPS_TRY(expr)                       \
  do {                                           \
    auto _r = (expr);                            \
    if (!_r) return std::unexpected(_r.error()); \
  } while (0)

/// accelerate's `accelerate config` YAML/JSON (accelerate_config.cc).
Result<void> FromAccelerate(Builder& b);

}  // namespace sparkops::memory::detail

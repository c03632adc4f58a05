#include "base/json_parse.h"

#include <fmt/format.h>

#include <cstdint>
#include <new>

namespace sparkops {

namespace {

using Json = nlohmann::json;

/// Forwards nlohmann's SAX events to its DOM builder, refusing the level past `max`: the parser
/// stops there (sax_parse returns false) with at most `max` levels built.
class DepthBoundedSax {
 public:
  DepthBoundedSax(Json& out, int max) : dom_(out, /*allow_exceptions=*/false), max_(max) {}

  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(Json::number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(Json::number_unsigned_t v) { return dom_.number_unsigned(v); }
  bool number_float(Json::number_float_t v, const Json::string_t& s) { return dom_.number_float(v, s); }
  bool string(Json::string_t& v) { return dom_.string(v); }
  bool binary(Json::binary_t& v) { return dom_.binary(v); }
  bool key(Json::string_t& v) { return dom_.key(v); }
  bool start_object(std::size_t n) { return Enter() && dom_.start_object(n); }
  bool start_array(std::size_t n) { return Enter() && dom_.start_array(n); }
  bool end_object() {
    --depth_;
    return dom_.end_object();
  }
  bool end_array() {
    --depth_;
    return dom_.end_array();
  }
  bool parse_error(std::size_t pos, const std::string&, const nlohmann::detail::exception& e) {
    error_ = fmt::format("not valid JSON at byte {}: {}", pos, e.what());
    return false;
  }

  const std::string& error() const { return error_; }

 private:
  bool Enter() {
    if (++depth_ <= max_) return true;
    error_ = fmt::format("nested deeper than {} levels", max_);
    return false;
  }

  nlohmann::detail::json_sax_dom_parser<Json> dom_;
  int max_;
  int depth_ = 0;
  std::string error_;
};

}  // namespace

Result<nlohmann::json> ParseJson(std::string_view text, int max_depth) {
  Json out;
  try {
    DepthBoundedSax sax(out, max_depth);
    if (!Json::sax_parse(text.begin(), text.end(), &sax) || !sax.error().empty())
      return InputError(sax.error().empty() ? std::string("not valid JSON") : sax.error());
  } catch (const std::bad_alloc&) {
    return InputError(fmt::format("too large to parse ({} bytes)", text.size()));
  } catch (const nlohmann::json::exception& e) {  // not expected with allow_exceptions=false; kept total
    return InputError(fmt::format("not valid JSON: {}", e.what()));
  }
  return out;
}

nlohmann::json ParseJsonOrDiscarded(std::string_view text, int max_depth) {
  auto j = ParseJson(text, max_depth);
  return j ? std::move(*j) : Json(Json::value_t::discarded);
}

}  // namespace sparkops

// fmt's compiled part, built into sparkops itself (SPARKOPS_STATIC_DEPS, cmake/static_deps.cmake):
// Debian's libfmt-dev ships only the shared library, and FMT_HEADER_ONLY in every file costs ~8 s
// of compile time per file (measured: 1.5 s -> 9.4 s CPU for a one-line fmt::format user). Here
// fmt's own implementation header is compiled once, with external linkage (FMT_FUNC is empty
// outside header-only mode), plus the template instances format.h declares but does not define.
#ifdef SPARKOPS_FMT_IMPL
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {
template auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template locale_ref::locale_ref(const std::locale& loc);
template auto locale_ref::get<std::locale>() const -> std::locale;
template auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl(locale_ref) -> char;
}  // namespace detail
FMT_END_NAMESPACE
#endif

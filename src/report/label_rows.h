#pragma once
/// Rows for text labels on a chart so that near labels do not overlap (issue #24: labels of
/// near slowdown episodes were drawn over each other).
#include <cstddef>
#include <vector>

namespace sparkops {

struct LabelSpan {
  double x = 0;      ///< left edge, px
  double width = 0;  ///< px
};

/// For each label (any order), the row to draw it in: the lowest row none of whose labels
/// (already placed, in input order) overlaps it with `gap` px to spare. After `max_rows` rows
/// are full at that place the label goes to the row whose overlapping labels end first.
std::vector<int> LabelRows(const std::vector<LabelSpan>& spans, int max_rows, double gap = 4);

/// The width of `chars` characters of the report's label font (11 px sans-serif), px.
inline double LabelWidth(size_t chars) { return 6.6 * static_cast<double>(chars); }

}  // namespace sparkops

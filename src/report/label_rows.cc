#include "report/label_rows.h"

#include <algorithm>

namespace sparkops {

std::vector<int> LabelRows(const std::vector<LabelSpan>& spans, int max_rows, double gap) {
  max_rows = std::max(max_rows, 1);
  std::vector<int> rows(spans.size(), 0);
  for (size_t i = 0; i < spans.size(); ++i) {
    // The right end of the labels already in each row that overlap this one (0 = free).
    std::vector<double> busy(static_cast<size_t>(max_rows), -1e300);
    for (size_t j = 0; j < i; ++j) {
      const bool overlap =
          spans[j].x < spans[i].x + spans[i].width + gap && spans[i].x < spans[j].x + spans[j].width + gap;
      if (overlap)
        busy[static_cast<size_t>(rows[j])] = std::max(busy[static_cast<size_t>(rows[j])], spans[j].x + spans[j].width);
    }
    auto free_row = std::find(busy.begin(), busy.end(), -1e300);
    rows[i] = static_cast<int>((free_row != busy.end() ? free_row : std::min_element(busy.begin(), busy.end())) -
                               busy.begin());
  }
  return rows;
}

}  // namespace sparkops

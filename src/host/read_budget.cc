#include "host/read_budget.h"

namespace sparkops {

namespace {
thread_local ReadBudgetScope* current = nullptr;
}  // namespace

std::string_view BudgetReasonName(BudgetReason r) { return r == BudgetReason::kTime ? "time" : "bytes"; }

ReadBudget::ReadBudget(ReadBudgetLimits limits) : limits_(limits), start_(std::chrono::steady_clock::now()) {}

bool ReadBudget::Spent() {
  if (reason_) return true;
  if (used_ > limits_.bytes) reason_ = BudgetReason::kBytes;
  else if (std::chrono::steady_clock::now() - start_ >= limits_.time) reason_ = BudgetReason::kTime;
  return reason_.has_value();
}

bool ReadBudget::Charge(uint64_t n) {
  used_ = n > UINT64_MAX - used_ ? UINT64_MAX : used_ + n;
  return !Spent();
}

bool ReadBudget::Fits(uint64_t n) {
  if (Spent()) return false;
  if (n > limits_.bytes - used_) reason_ = BudgetReason::kBytes;  // used_ <= bytes: not spent
  return !reason_;
}

ReadBudgetScope::ReadBudgetScope(ReadBudget& budget) : budget_(budget), outer_(current) { current = this; }

ReadBudgetScope::~ReadBudgetScope() { current = outer_; }

bool ReadBudgetSpent() {
  bool spent = false;
  for (ReadBudgetScope* s = current; s; s = s->outer_) spent = s->budget_.Spent() || spent;
  return spent;
}

bool ChargeRead(uint64_t bytes) {
  bool ok = true;
  for (ReadBudgetScope* s = current; s; s = s->outer_) ok = s->budget_.Charge(bytes) && ok;
  return ok;
}

bool ReserveRead(uint64_t bytes) {
  for (ReadBudgetScope* s = current; s; s = s->outer_)
    if (!s->budget_.Fits(bytes)) return false;
  return ChargeRead(bytes);
}

bool InReadBudgetScope() { return current != nullptr; }

}  // namespace sparkops

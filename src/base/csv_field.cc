#include "base/csv_field.h"

namespace sparkops {
namespace {
bool Blank(char c) { return c == ' ' || c == '\t'; }
}  // namespace

std::string CsvQuote(std::string_view field) {
  const bool edge_blank = !field.empty() && (Blank(field.front()) || Blank(field.back()));
  if (!edge_blank && field.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(field);
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string CsvJoin(const std::vector<std::string>& fields) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i) out += ',';
    out += CsvQuote(fields[i]);
  }
  return out;
}

bool CsvOpenQuote(std::string_view text, bool in_quotes) {
  // Outside a quoted field a quote opens one only at the field's start (after blanks); inside
  // one, a quote closes it unless doubled ("" is one quote, and re-opens at once here).
  bool field_start = true;
  for (char c : text) {
    if (in_quotes) {
      if (c == '"') in_quotes = false;
      continue;
    }
    if (c == '"' && field_start) {
      in_quotes = true;
      continue;
    }
    if (c == ',' || c == '\n') field_start = true;
    else if (!Blank(c)) field_start = false;
  }
  return in_quotes;
}

std::string CsvSplit(std::string_view rec, std::vector<std::string>* out) {
  out->clear();
  if (!rec.empty() && rec.back() == '\r') rec.remove_suffix(1);
  size_t i = 0;
  const size_t n = rec.size();
  while (true) {
    while (i < n && Blank(rec[i])) ++i;
    std::string field;
    if (i < n && rec[i] == '"') {
      size_t open = i++;
      bool closed = false;
      while (i < n) {
        if (rec[i] == '"') {
          if (i + 1 < n && rec[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          closed = true;
          break;
        }
        field += rec[i++];
      }
      if (!closed) return "a quoted field opened at byte " + std::to_string(open + 1) + " is not closed";
      while (i < n && Blank(rec[i])) ++i;
      if (i < n && rec[i] != ',') return "text after the closing quote of a field at byte " + std::to_string(open + 1);
    } else {
      size_t start = i;
      while (i < n && rec[i] != ',') ++i;
      size_t end = i;
      while (end > start && Blank(rec[end - 1])) --end;
      field.assign(rec.substr(start, end - start));
    }
    out->push_back(std::move(field));
    if (i >= n) break;
    ++i;  // the comma
  }
  return "";
}

}  // namespace sparkops

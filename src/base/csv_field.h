#pragma once
/// CSV fields per RFC 4180: a field holding a comma, a double quote, CR or LF (or starting or ending with a blank,
/// which readers trim) is written inside double quotes with each quote doubled; any other field is written as is (so
/// a row of plain numbers is byte-for-byte what it was before quoting existed). Readers split records with the same
/// rules and also accept CRLF line ends and quotes around any field (a spreadsheet export).
#include <string>
#include <string_view>
#include <vector>

namespace sparkops {

/// The field as it goes into a record (quoted only when it must be).
std::string CsvQuote(std::string_view field);
/// The fields joined by commas, each through CsvQuote.
std::string CsvJoin(const std::vector<std::string>& fields);

/// True when `text` ends inside a quoted field (its record continues on the next line).
/// `in_quotes`: `text` continues a record whose previous line ended inside a quoted field (so a
/// reader scans each line once, never the whole record again).
bool CsvOpenQuote(std::string_view text, bool in_quotes = false);

/// Splits one record (without its line end; a trailing CR is dropped) into fields. Unquoted
/// fields are trimmed of blanks (nvidia-smi writes ", " between fields); a quoted field keeps its
/// contents exactly, quotes undoubled; blanks around the quotes are ignored. Returns "" or a
/// description of the defect (a quote inside an unquoted field is kept as text, as RFC 4180
/// readers commonly do; text after a closing quote, or an unclosed quote, is a defect).
std::string CsvSplit(std::string_view record, std::vector<std::string>* out);

}  // namespace sparkops

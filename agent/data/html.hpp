#pragma once
// The one HTML escape of the project: everything a model or a user wrote goes
// through it before it reaches a page (report or viewer).
#include <string>
#include <string_view>

namespace ptxbench::data {

// Escapes & < > " ' so the text is safe in element content and in quoted
// attribute values. Invalid UTF-8 passes through byte for byte.
std::string html_escape(std::string_view text);

}  // namespace ptxbench::data

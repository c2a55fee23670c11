// The topic prefix's check (see topic_prefix.hpp).
#include "topic_prefix.hpp"

namespace dsekp::edge {

std::string topic_prefix_problem(std::string_view prefix) {
  for (const char c : prefix) {
    if (c <= ' ' || c > '~') return "the topic prefix may hold only printable ASCII, no spaces";
    if (c == '+' || c == '#') return "the topic prefix may not hold the wildcards + or #";
    // '%' would be expanded in the devices' pattern lines (%u, %c).
    if (c == '%') return "the topic prefix may not hold '%'";
    // It goes into the firmware header's C string literals as it is.
    if (c == '"' || c == '\\') return "the topic prefix may not hold a quote or a backslash";
  }
  // "??/" is a backslash in a C string under a strict C mode (trigraphs; gcc -std=c99).
  if (prefix.find("??") != std::string_view::npos)
    return "the topic prefix may not hold \"??\" (a C trigraph in the firmware header)";
  // An empty level ("/site1/", "site1//") is refused by the republish base and most tools.
  if ((!prefix.empty() && prefix.front() == '/') || prefix.find("//") != std::string_view::npos)
    return "the topic prefix may not start with '/' or hold an empty level (\"//\")";
  if (!prefix.empty() && prefix.front() == '$')
    return "the topic prefix may not start with '$' (the broker's own topics)";
  if (prefix.size() > 128) return "the topic prefix is longer than 128 characters";
  return {};
}

}  // namespace dsekp::edge

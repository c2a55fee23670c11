// Building blocks of the attacker's payloads: text surgery on genuine JSON frames, byte surgery
// on compact ones, and random bytes from a fixed seed. Nothing here knows a device secret.
#pragma once

#include <cstdint>
#include <random>
#include <string>

namespace dsekp::hostile {

/// `text` with the first `from` replaced by `to`; unchanged (and flagged by the caller's
/// expectations failing) if `from` is absent.
inline std::string replace_first(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

/// The JSON member `"name":value` of a frame as sent (no whitespace), value included.
inline std::string json_member(const std::string& json, const std::string& name) {
  const std::string key = "\"" + name + "\":";
  const auto at = json.find(key);
  if (at == std::string::npos) return "";
  auto end = at + key.size();
  if (json[end] == '"') {
    end = json.find('"', end + 1) + 1;
  } else {
    while (end < json.size() && json[end] != ',' && json[end] != '}') ++end;
  }
  return json.substr(at, end - at);
}

/// `text` with bit `bit` of byte `index` flipped.
inline std::string flip(std::string text, std::size_t index, int bit) {
  text[index] = static_cast<char>(text[index] ^ (1 << bit));
  return text;
}

inline std::string random_bytes(std::mt19937& rng, std::size_t n) {
  std::string out(n, '\0');
  for (auto& c : out) c = static_cast<char>(rng());
  return out;
}

}  // namespace dsekp::hostile

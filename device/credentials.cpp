// Reading the credentials file (see credentials.hpp).
#include "device/credentials.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/hex.hpp"
#include "dsekp/bytes.hpp"

namespace dsekp::device {
namespace {

using nlohmann::json;

class Parser {
 public:
  Parser(const std::string& source, std::size_t index, bool in_array)
      : source_(source), index_(index), in_array_(in_array) {}

  [[noreturn]] void fail(const std::string& problem) const {
    std::string where = source_ + ": ";
    if (in_array_) where += "device #" + std::to_string(index_ + 1);
    if (!dev_id_.empty()) where += (in_array_ ? " \"" : "device \"") + dev_id_ + "\"";
    if (in_array_ || !dev_id_.empty()) where += ": ";
    throw CredentialsError(where + problem);
  }

  const json& member(const json& object, const char* name, const char* path) const {
    const auto it = object.find(name);
    if (it == object.end()) fail(std::string("missing \"") + path + "\"");
    return *it;
  }

  std::string string_member(const json& object, const char* name, const char* path) const {
    const json& v = member(object, name, path);
    if (!v.is_string()) fail(std::string("\"") + path + "\" must be a string");
    return v.get<std::string>();
  }

  /// Decodes a hex member of `min`..`max` bytes into `out` (sized to the decoded length).
  std::vector<std::uint8_t> hex_member(const json& object, const char* name, std::size_t min,
                                       std::size_t max) const {
    const std::string text = string_member(object, name, name);
    const std::string expected =
        min == max ? std::to_string(2 * min) + " hex digits (" + std::to_string(min) + " bytes)"
                   : std::to_string(2 * min) + " to " + std::to_string(2 * max) + " hex digits (" +
                         std::to_string(min) + " to " + std::to_string(max) + " bytes)";
    if (text.size() % 2 != 0 || text.size() < 2 * min || text.size() > 2 * max)
      fail(std::string("\"") + name + "\" must be " + expected + ", got " +
           std::to_string(text.size()) + " characters");
    std::vector<std::uint8_t> bytes(text.size() / 2);
    if (!hex::decode(text, MutableByteView(bytes))) {
      fail(std::string("\"") + name + "\" is not hex (character " +
           std::to_string(hex::find_non_digit(text) + 1) + ")");
    }
    return bytes;
  }

  std::string topic(const json& topics, const char* name, std::string fallback) const {
    if (!topics.contains(name)) return fallback;
    const std::string path = std::string("topics.") + name;
    const std::string t = string_member(topics, name, path.c_str());
    if (t.empty() || t.find_first_of("+#") != std::string::npos ||
        t.find('\0') != std::string::npos)
      fail("\"" + path + "\" must be a non-empty topic without wildcards, got \"" + t + "\"");
    return t;
  }

  ProvisionedDevice parse(const json& object) {
    if (!object.is_object()) fail("expected a JSON object (as printed by `dsekp keys add`)");
    ProvisionedDevice d;
    const std::string dev_id = string_member(object, "dev_id", "dev_id");
    if (d.credentials.dev_id.assign(dev_id) != Error::ok)
      fail("\"dev_id\" must be 1-64 characters of [A-Za-z0-9._-], got \"" + dev_id.substr(0, 80) +
           "\"");
    dev_id_ = dev_id;

    std::vector<std::uint8_t> secret =
        hex_member(object, "dev_secret_hex", kDevSecretSize, kDevSecretSize);
    const bool secret_ok = d.credentials.dev_secret.assign(ByteView(secret));
    secure_wipe(MutableByteView(secret));
    std::vector<std::uint8_t> salt =
        hex_member(object, "edge_salt_hex", kEdgeSaltMinSize, kEdgeSaltMaxSize);
    const bool salt_ok = d.credentials.edge_salt.assign(ByteView(salt)) == Error::ok;
    bool psk_ok = true;
    if (object.contains("psk_key_hex")) {
      std::vector<std::uint8_t> psk = hex_member(object, "psk_key_hex", kAeadKeySize, kAeadKeySize);
      psk_ok = d.psk_key.assign(ByteView(psk));
      secure_wipe(MutableByteView(psk));
      d.has_psk_key = true;
    }
    if (!secret_ok || !salt_ok || !psk_ok) fail("internal error: key sizes");
    if (const auto it = object.find("generation"); it != object.end()) {
      if (!it->is_number_unsigned()) fail("\"generation\" must be an unsigned integer");
      d.generation = it->get<std::uint64_t>();
    }
    if (const auto it = object.find("ratchet"); it != object.end()) {
      if (!it->is_boolean()) fail("\"ratchet\" must be true or false");
      d.ratchet = it->get<bool>();
    }

    if (const auto it = object.find("broker"); it != object.end() && !it->is_null()) {
      if (!it->is_object()) fail("\"broker\" must be an object");
      if (it->contains("username")) d.username = string_member(*it, "username", "broker.username");
      if (it->contains("password")) d.password = string_member(*it, "password", "broker.password");
      if (d.username.empty() && !d.password.empty())
        fail("\"broker.password\" is set but \"broker.username\" is empty");
    }

    d.topics.ack = "dsekp/init/ack/" + dev_id;
    d.topics.down = "dsekp/down/" + dev_id;
    d.topics.rekey = "dsekp/rekey/" + dev_id;
    if (const auto it = object.find("topics"); it != object.end() && !it->is_null()) {
      if (!it->is_object()) fail("\"topics\" must be an object");
      d.topics.init = topic(*it, "init", d.topics.init);
      d.topics.ack = topic(*it, "ack", d.topics.ack);
      d.topics.data = topic(*it, "data", d.topics.data);
      d.topics.down = topic(*it, "down", d.topics.down);
      d.topics.rekey = topic(*it, "rekey", d.topics.rekey);
      d.topics.psk = topic(*it, "psk", d.topics.psk);
    }
    return d;
  }

 private:
  const std::string& source_;
  std::size_t index_;
  bool in_array_;
  std::string dev_id_;
};

}  // namespace

std::vector<ProvisionedDevice> parse_credentials(std::string_view text, const std::string& source) {
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    throw CredentialsError(source + ": not valid JSON (" + e.what() + ")");
  }
  std::vector<ProvisionedDevice> devices;
  if (doc.is_array()) {
    if (doc.empty()) throw CredentialsError(source + ": the array holds no device");
    devices.reserve(doc.size());
    for (std::size_t i = 0; i < doc.size(); ++i)
      devices.push_back(Parser(source, i, true).parse(doc[i]));
  } else if (doc.is_object()) {
    devices.push_back(Parser(source, 0, false).parse(doc));
  } else {
    throw CredentialsError(source +
                           ": expected a JSON object or an array of objects (as printed by "
                           "`dsekp keys add`)");
  }
  std::set<std::string_view> seen;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const std::string_view id = devices[i].credentials.dev_id.str();
    if (!seen.insert(id).second)
      throw CredentialsError(source + ": device #" + std::to_string(i + 1) + ": dev_id \"" +
                             std::string(id) + "\" appears twice");
  }
  return devices;
}

std::vector<ProvisionedDevice> load_credentials(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw CredentialsError(path.string() + ": is a directory, not a credentials file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CredentialsError(path.string() + ": cannot read: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw CredentialsError(path.string() + ": cannot read");
  std::string contents = text.str();
  auto devices = parse_credentials(contents, path.string());
  // The text holds every device's secrets in hex.
  secure_wipe(MutableByteView(reinterpret_cast<std::uint8_t*>(contents.data()), contents.size()));
  return devices;
}

}  // namespace dsekp::device

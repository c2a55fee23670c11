// Several "hosts" on one machine, for partition tests: a Linux bridge in the machine's network
// namespace and one network namespace per host, each joined to the bridge by a veth pair and given
// its own address (10.X.Y.10+i/24; the bridge has 10.X.Y.1, so the test's own processes reach every
// host). A host is cut off by taking its veth end on the bridge down: its packets are dropped both
// ways, its connections hang as in a real partition (no reset), and it keeps running; heal() brings
// the link back.
//
// Needs root and iproute2 (`ip`): available() says whether both are there. Everything is named
// after the test's pid (bridge dsb<pid>, namespaces dsekp-<pid>-<i>) and removed on destruction;
// leftovers of a killed run are removed by the next one (their pid no longer exists).
#pragma once

#include <string>
#include <vector>

namespace dsekp::test {

class HostNetwork {
 public:
  /// Why partition tests cannot run here ("" if they can): not root, no `ip`, or no namespace
  /// can be made (tried once).
  static std::string unavailable_reason();

  /// Creates the bridge and `hosts` namespaces; throws std::runtime_error with `ip`'s message if
  /// a step fails (what was made so far is removed).
  explicit HostNetwork(int hosts);
  ~HostNetwork();
  HostNetwork(const HostNetwork&) = delete;
  HostNetwork& operator=(const HostNetwork&) = delete;

  [[nodiscard]] int size() const noexcept { return static_cast<int>(namespaces_.size()); }
  /// Host i's network namespace (for `ip netns exec`) and address.
  [[nodiscard]] const std::string& netns(int host) const { return namespaces_.at(index(host)); }
  [[nodiscard]] std::string address(int host) const;
  /// Drops every packet to and from host i / lets them through again.
  void cut(int host);
  void heal(int host);

 private:
  [[nodiscard]] static std::size_t index(int host) { return static_cast<std::size_t>(host); }
  void remove_all() noexcept;

  std::string prefix_;  // "10.X.Y."
  std::string bridge_;
  std::vector<std::string> namespaces_;
  std::vector<std::string> bridge_ends_;  // the veth end on the bridge, per host
};

}  // namespace dsekp::test

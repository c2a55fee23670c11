// The grant table of every broker account kind (see broker_grants.hpp).
#include "broker_grants.hpp"

#include "republish_topics.hpp"

namespace dsekp::edge {

std::vector<TopicGrant> account_grants(AccountRole role, const GrantScope& scope) {
  const std::string& p = scope.topic_prefix;
  const std::string republished = RepublishTopics(republish_base(p, scope.republish_topic)).all();
  using A = TopicAccess;
  switch (role) {
    case AccountRole::edge: {
      std::vector<TopicGrant> grants = {{A::read, p + "dsekp/init"},
                                        {A::read, p + "dsekp/data"},
                                        {A::read, p + "dsekp/init/+"},
                                        {A::read, p + "dsekp/data/+"}};
      if (scope.psk_baseline) grants.push_back({A::read, p + "psk/data"});
      grants.insert(grants.end(), {{A::write, p + "dsekp/init/ack/+"},
                                   {A::write, p + "dsekp/down/+"},
                                   {A::write, p + "dsekp/rekey/+"},
                                   {A::write, republished},
                                   {A::read, p + "dsekp/admin/downlink"},
                                   {A::write, p + "dsekp/admin/result/+"}});
      if (scope.home_assistant) grants.push_back({A::write, "homeassistant/sensor/+/+/config"});
      return grants;
    }
    case AccountRole::reader:
      if (scope.home_assistant) return {{A::read, republished}, {A::read, "homeassistant/#"}};
      return {{A::read, republished}};
    case AccountRole::downlink:
      return {{A::write, p + "dsekp/admin/downlink"}, {A::read, p + "dsekp/admin/result/+"}};
  }
  return {};
}

std::vector<TopicGrant> device_grants(std::string_view dev_id, const GrantScope& scope) {
  const std::string& p = scope.topic_prefix;
  const std::string d(dev_id);
  using A = TopicAccess;
  std::vector<TopicGrant> grants;
  // Per-device topics bind what a device account may publish to its own dev_id (the edge checks
  // the frame's dev_id against the topic's); shared ones let it publish frames naming any device.
  if (scope.uplink_topics == UplinkTopics::per_device)
    grants = {{A::write, p + "dsekp/init/" + d}, {A::write, p + "dsekp/data/" + d}};
  else
    grants = {{A::write, p + "dsekp/init"}, {A::write, p + "dsekp/data"}};
  if (scope.psk_baseline) grants.push_back({A::write, p + "psk/data"});
  grants.insert(grants.end(), {{A::read, p + "dsekp/init/ack/" + d},
                               {A::read, p + "dsekp/down/" + d},
                               {A::read, p + "dsekp/rekey/" + d}});
  return grants;
}

}  // namespace dsekp::edge

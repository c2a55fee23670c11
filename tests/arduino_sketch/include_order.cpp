// The generated header before the SDK's (the sketch includes them the other way round): no name of
// one may be a macro, type or enumerator of the other, in either order. Compiled into the host
// sketch; nothing here runs.
#include "dsekp_device_config.h"
//
#include "dsekp_client.h"

const char* dsekp_sketch_include_order_check() {
  static_assert(DSEKP_TOPIC_ACK != DSEKP_TOPIC_DOWN, "the SDK's dsekp_topic values are intact");
  return DSEKP_TOPIC_NAME_ACK;
}

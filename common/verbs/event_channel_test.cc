// SPDX-License-Identifier: BSD-3-Clause
// EventChannel without an RDMA device: creation either works (rdma_cm present) or fails with a
// Status naming the verb and errno. Which branch ran is printed; neither pretends to be the
// other. Device behaviour (events, CM ids) is covered by the rxe-tagged tests elsewhere.
#include "common/verbs/event_channel.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>

namespace nvmf::verbs {
namespace {

TEST(EventChannelTest, CreateSucceedsOrNamesTheVerb) {
  Result<EventChannel> channel = EventChannel::create();
  if (!channel.ok()) {
    std::printf("no rdma_cm here: %s\n", channel.status().to_string().c_str());
    EXPECT_EQ(channel.status().message().rfind("rdma_create_event_channel: ", 0), 0u)
        << channel.status().message();
    ASSERT_TRUE(channel.status().os_errno().has_value());
    EXPECT_NE(*channel.status().os_errno(), 0);
    EXPECT_NE(channel.status().message().find("(errno "), std::string::npos);
    if (*channel.status().os_errno() == ENODEV) {
      EXPECT_NE(channel.status().message().find(kNoRdmaDeviceHint), std::string::npos)
          << channel.status().message();
      EXPECT_EQ(channel.status().code(), StatusCode::kUnavailable);
    }
    return;
  }
  std::printf("rdma_cm available: testing fd, nonblocking and the timeout path\n");
  EXPECT_GE(channel->fd(), 0);
  EXPECT_TRUE(channel->set_nonblocking().ok());
  Result<CmEvent> event = channel->get_event(0);
  ASSERT_FALSE(event.ok());
  EXPECT_EQ(event.status().code(), StatusCode::kTimeout);
  // Moving keeps exactly one owner.
  EventChannel moved = std::move(*channel);
  EXPECT_GE(moved.fd(), 0);
}

}  // namespace
}  // namespace nvmf::verbs

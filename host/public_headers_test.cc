// SPDX-License-Identifier: BSD-3-Clause
// The library's public headers (host_lib's hdrs) as a program sees them: each compiles on its own
// with nothing but //host:host_lib and //common:status, and the defaults a program starts from
// are Linux's and nvme-cli's.
#include <gtest/gtest.h>

#include "host/ana.h"
#include "host/controller.h"
#include "host/discover.h"
#include "host/identify.h"
#include "host/io_channel.h"
#include "host/io_plan.h"
#include "host/io_queue.h"
#include "host/multipath.h"
#include "host/options.h"

namespace nvmf::host {
namespace {

TEST(PublicHeaders, OptionsStartFromTheLinuxHostsDefaults) {
  HostOptions o;
  EXPECT_EQ(o.trsvcid, "4420");
  EXPECT_EQ(o.num_io_queues, 1);
  EXPECT_EQ(o.reconnect_delay_s, 10);   // nvme-cli --reconnect-delay
  EXPECT_EQ(o.ctrl_loss_tmo_s, 600);    // nvme-cli --ctrl-loss-tmo
  EXPECT_EQ(o.fast_io_fail_tmo_s, -1);  // off, as Linux's default
  EXPECT_EQ(o.poll_mode, PollMode::kEvent);
}

TEST(PublicHeaders, HostIdsAreVersion4UuidsWithTheirDefaultNqn) {
  HostId id = random_host_id();
  EXPECT_EQ(id[6] >> 4, 4) << "RFC 4122 version 4";
  EXPECT_EQ(id[8] >> 6, 2) << "RFC 4122 variant";
  const std::string uuid = uuid_string(id);
  ASSERT_EQ(uuid.size(), 36u);
  EXPECT_EQ(default_hostnqn(id), "nqn.2014-08.org.nvmexpress:uuid:" + uuid);
}

TEST(PublicHeaders, IdentifyAndAnaHelpersDecodeAsTheSpecSays) {
  EXPECT_EQ(mdts_bytes(5, 4096), 128u * 1024) << "2^MDTS pages of CAP.MPSMIN";
  EXPECT_EQ(mdts_bytes(0, 4096), 0u) << "MDTS 0: no limit";
  EXPECT_EQ(ana_state_text(0x01), "optimized");
  EXPECT_EQ(ana_state_text(0x05), "state 05h");
}

}  // namespace
}  // namespace nvmf::host

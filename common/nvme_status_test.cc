// SPDX-License-Identifier: BSD-3-Clause
// Tests for the CQE status field helpers.
#include "common/nvme_status.h"

#include <gtest/gtest.h>

namespace nvmf {
namespace {

using namespace proto;  // NOLINT

TEST(NvmeStatusTest, MakeStatusBitLayout) {
  EXPECT_EQ(make_status(kSctGeneric, kScSuccess), 0);
  EXPECT_EQ(make_status(kSctGeneric, kScInvalidField, true), 0x8004);
  EXPECT_EQ(make_status(kSctGeneric, kScLbaOutOfRange, true), 0x8100);
  EXPECT_EQ(make_status(kSctCommandSpecific, kScConnectInvalidParameters), 0x0304);
  // Linux NVME_SC_* == field >> 1.
  EXPECT_EQ(make_status(kSctCommandSpecific, kScConnectInvalidHost) >> 1, 0x184);
  EXPECT_EQ(make_status(kSctGeneric, kScSglOffsetInvalid) >> 1, 0x16);
  EXPECT_EQ(generic_status(kScDataSglLengthInvalid), make_status(0, 0x0F, true));
}

TEST(NvmeStatusTest, Accessors) {
  uint16_t s = make_status(kSctCommandSpecific, kScInvalidQueueSize, true) | kStatusPhase |
               kStatusMore | (2u << kStatusCrdShift);
  EXPECT_EQ(status_sct(s), kSctCommandSpecific);
  EXPECT_EQ(status_sc(s), kScInvalidQueueSize);
  EXPECT_TRUE(status_dnr(s));
  EXPECT_TRUE(status_more(s));
  EXPECT_TRUE(status_phase(s));
  EXPECT_EQ(status_crd(s), 2);
  EXPECT_FALSE(status_phase(status_without_phase(s)));
  EXPECT_FALSE(status_is_success(s));
  EXPECT_TRUE(status_is_success(kStatusPhase));
  EXPECT_TRUE(status_is_success(kStatusSuccess));
}

TEST(NvmeStatusTest, Names) {
  EXPECT_EQ(status_name(make_status(kSctGeneric, kScLbaOutOfRange, true)),
            "LBA Out of Range (SCT 0x0 SC 0x80, DNR)");
  EXPECT_EQ(status_name(0), "Success (SCT 0x0 SC 0x00)");
  EXPECT_EQ(status_name(kStatusPhase), "Success (SCT 0x0 SC 0x00)");
  EXPECT_EQ(status_name(make_status(kSctCommandSpecific, kScConnectInvalidHost, true)),
            "Connect Invalid Host (SCT 0x1 SC 0x84, DNR)");
  EXPECT_EQ(status_name(make_status(kSctCommandSpecific, 0x91, true)),
            "Authentication Required (SCT 0x1 SC 0x91, DNR)");
  EXPECT_EQ(status_name(make_status(kSctGeneric, 0x7E)), "Unknown (SCT 0x0 SC 0x7e)");
  EXPECT_EQ(status_name(make_status(kSctGeneric, kScInternalError) | kStatusMore |
                        (1u << kStatusCrdShift)),
            "Internal Error (SCT 0x0 SC 0x06, M, CRD 1)");
  EXPECT_EQ(status_code_text(kSctGeneric, kScSglDescriptorTypeInvalid),
            "SGL Descriptor Type Invalid");
  EXPECT_EQ(status_code_text(5, 0), "Unknown");
}

TEST(NvmeStatusTest, PathRelatedNames) {
  EXPECT_EQ(status_name(make_status(kSctPath, kScHostPathingError)),
            "Host Pathing Error (SCT 0x3 SC 0x70)");
  EXPECT_EQ(status_name(make_status(kSctPath, kScControllerPathingError)),
            "Controller Pathing Error (SCT 0x3 SC 0x60)");
  EXPECT_EQ(make_status(kSctPath, kScHostPathingError) >> 1,
            0x370);  // Linux's NVME_SC_HOST_PATH_ERROR
  EXPECT_EQ(status_code_text(kSctPath, kScCommandAbortedByHost), "Command Aborted By Host");
  EXPECT_EQ(status_code_text(kSctPath, 0x00), "Path Related Status");
  // The ANA statuses, Linux's NVME_SC_ANA_PERSISTENT_LOSS, _INACCESSIBLE, _TRANSITION.
  EXPECT_EQ(status_name(make_status(kSctPath, kScAnaInaccessible)),
            "Asymmetric Access Inaccessible (SCT 0x3 SC 0x02)");
  EXPECT_EQ(make_status(kSctPath, kScAnaPersistentLoss) >> 1, 0x301);
  EXPECT_EQ(make_status(kSctPath, kScAnaInaccessible) >> 1, 0x302);
  EXPECT_EQ(make_status(kSctPath, kScAnaTransition) >> 1, 0x303);
  EXPECT_EQ(status_code_text(kSctPath, kScAnaPersistentLoss), "Asymmetric Access Persistent Loss");
  EXPECT_EQ(status_code_text(kSctPath, kScAnaTransition), "Asymmetric Access Transition");
}

}  // namespace
}  // namespace nvmf

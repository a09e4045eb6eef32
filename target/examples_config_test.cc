// SPDX-License-Identifier: BSD-3-Clause
// Every examples/*.json goes through the real config parser (load_nvmet_config) and declares
// what its name promises: ports, subsystems, namespaces and their backing paths.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "target/config.h"
#include "target/target_options.h"

namespace nvmf::target {
namespace {

namespace fs = std::filesystem;

fs::path examples_dir() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  return fs::path(srcdir != nullptr ? srcdir : ".") / "nvmf_rdma" / "examples";
}

// Every example config in the runfiles (//examples:configs), by file name.
std::vector<std::string> example_files() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(examples_dir(), ec)) {
    if (entry.path().extension() == ".json") names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

Result<NvmetConfig> load(const std::string& name) {
  return load_nvmet_config((examples_dir() / name).string(), TargetOptions{});
}

// The namespaces of a subsystem as nsid -> backing path.
std::map<uint32_t, std::string> namespaces_of(const SubsystemOptions& s) {
  std::map<uint32_t, std::string> out{{s.nsid, s.file_path}};
  for (const auto& n : s.more_namespaces) out[n.nsid] = n.file_path;
  return out;
}

TEST(ExamplesConfigTest, EveryExampleLoadsWithoutWarnings) {
  std::vector<std::string> names = example_files();
  for (const char* want :
       {"multi-namespace.json", "rdma-bdev.json", "rdma-file.json", "two-ports.json"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end())
        << "examples/" << want << " is not in the runfiles (//examples:configs)";
  }
  for (const std::string& name : names) {
    SCOPED_TRACE("examples/" + name);
    auto r = load(name);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_TRUE(r->warnings.empty()) << r->warnings.front();
    EXPECT_TRUE(validate_options(r->options).ok()) << validate_options(r->options).to_string();
    EXPECT_FALSE(r->options.subsystems.empty());
    EXPECT_FALSE(r->options.ports.empty());
  }
}

// The README's export-a-disk example (ci/readme-commands.sh runs it in the soft-RoCE guest).
TEST(ExamplesConfigTest, RdmaFileExportsDisk1Image) {
  auto r = load("rdma-file.json");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const TargetOptions& o = r->options;
  ASSERT_EQ(o.ports.size(), 1u);
  EXPECT_EQ(o.ports[0].traddr, "10.0.0.1");
  EXPECT_EQ(o.ports[0].trsvcid, "4420");
  EXPECT_EQ(o.traddr, "10.0.0.1");
  ASSERT_EQ(o.subsystems.size(), 1u);
  const SubsystemOptions& s = o.subsystems[0];
  EXPECT_EQ(s.nqn, "nqn.2026-12.io.nvmf-rdma:disk1");
  EXPECT_TRUE(s.allow_any_host);
  EXPECT_EQ(namespaces_of(s), (std::map<uint32_t, std::string>{{1, "/var/lib/nvmf/disk1.img"}}));
  EXPECT_EQ(o.ports[0].subsystems, std::vector<std::string>{s.nqn});
}

TEST(ExamplesConfigTest, RdmaBdevExportsABlockDeviceWithODirect) {
  auto r = load("rdma-bdev.json");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const TargetOptions& o = r->options;
  ASSERT_EQ(o.ports.size(), 1u);
  EXPECT_EQ(o.ports[0].traddr, "10.0.0.1");
  ASSERT_EQ(o.subsystems.size(), 1u);
  const SubsystemOptions& s = o.subsystems[0];
  EXPECT_TRUE(s.allow_any_host);
  EXPECT_EQ(namespaces_of(s), (std::map<uint32_t, std::string>{{1, "/dev/nvme0n1"}}));
  EXPECT_EQ(s.direct_io, std::optional<bool>(true)) << "buffered_io 0";
}

TEST(ExamplesConfigTest, TwoPortsServeOneSubsystem) {
  auto r = load("two-ports.json");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const TargetOptions& o = r->options;
  ASSERT_EQ(o.ports.size(), 2u);
  EXPECT_NE(o.ports[0].portid, o.ports[1].portid);
  EXPECT_NE(o.ports[0].traddr + ":" + o.ports[0].trsvcid,
            o.ports[1].traddr + ":" + o.ports[1].trsvcid);
  ASSERT_EQ(o.subsystems.size(), 1u);
  for (const PortOptions& p : o.ports) {
    EXPECT_EQ(p.subsystems, std::vector<std::string>{o.subsystems[0].nqn}) << p.traddr;
  }
  EXPECT_EQ(o.ports[0].inline_data_size, 16384);
  EXPECT_EQ(o.ports[1].inline_data_size, 0);
}

TEST(ExamplesConfigTest, MultiNamespaceHasSeveralNamespacesForOneHost) {
  auto r = load("multi-namespace.json");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const TargetOptions& o = r->options;
  ASSERT_EQ(o.subsystems.size(), 1u);
  const SubsystemOptions& s = o.subsystems[0];
  EXPECT_EQ(namespaces_of(s), (std::map<uint32_t, std::string>{
                                  {1, "/var/lib/nvmf/pool-1.img"},
                                  {2, "/var/lib/nvmf/pool-2.img"},
                                  {3, "/dev/nvme1n1"},
                              }));
  EXPECT_FALSE(s.allow_any_host);
  ASSERT_EQ(s.allowed_hosts.size(), 1u);
  ASSERT_EQ(s.more_namespaces.size(), 2u);
  EXPECT_EQ(s.more_namespaces[0].direct_io, std::optional<bool>(false)) << "buffered_io 1";
}

}  // namespace
}  // namespace nvmf::target

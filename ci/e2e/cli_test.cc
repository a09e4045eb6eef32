// SPDX-License-Identifier: BSD-3-Clause
// End to end over soft-RoCE with the two binaries as separate processes, as users run them:
// nvmf-target serves a file, nvmf-host writes a real file of a few MiB and reads it back.
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "ci/e2e/cli_harness.h"
#include "ci/e2e/rxe_env.h"
#include "host/controller.h"

namespace nvmf::e2e {
namespace {

constexpr char kNqn[] = "nqn.2024-01.io.nvmf-rdma:cli-e2e";

class CliTest : public CliFixture {
 protected:
  CliTest() : CliFixture(kNqn) {}
  // A target serving an 8 MiB RAM namespace with its control socket at tmpdir()/NAME.sock;
  // returns its port (0 when it did not start).
  int start_rpc_target(const std::string& name) {
    sock_ = tmpdir() + "/" + name + ".sock";
    unlink(sock_.c_str());
    return start_target({"--ram-size", "8m", "--rpc-socket", sock_});
  }
  // `nvmf-target rpc METHOD 'PARAMS'` on that socket: its exit status and output.
  std::pair<int, std::string> call(const std::string& method, const std::string& params) {
    const std::string out = tmpdir() + "/rpc-call.out";
    const int rc = run("timeout 60 '" + runfile("target/nvmf-target") + "' rpc -s '" + sock_ +
                       "' " + method + " '" + params + "' > " + out + " 2>&1");
    return {rc, slurp(out)};
  }
  // `cmd` run by /bin/sh in the background; its pid.
  static pid_t spawn(const std::string& cmd) {
    const pid_t pid = fork();
    if (pid == 0) {
      execl("/bin/sh", "sh", "-c", cmd.c_str(), nullptr);
      _exit(127);
    }
    return pid;
  }
  // Whether `nqn` has `count` live controllers within 60 s.
  bool wait_controllers(const std::string& nqn, size_t count) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      auto [rc, out] = call("nvmf_subsystem_get_controllers", "{\"nqn\": \"" + nqn + "\"}");
      if (rc == 0 && nlohmann::json::parse(out).size() == count) return true;
    }
    return false;
  }
  std::string sock_;

  static int first_cpu(const cpu_set_t& mask) {
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &mask)) return c;
    }
    return 0;
  }
};

TEST_F(CliTest, WritesAndReadsBackARealFileWithMatchingSha256) {
  const std::string input = tmpdir() + "/input.bin";
  const std::string readback = tmpdir() + "/readback.bin";
  const std::string ns = tmpdir() + "/namespace.img";
  const std::string report = tmpdir() + "/target.json";
  // A few MiB, not a whole number of LBAs: the host pads the last one with zeros.
  const size_t size = (3u << 20) + 100;
  {
    std::vector<char> data(size);
    std::mt19937 rng(42);
    for (auto& c : data) c = static_cast<char>(rng());
    std::ofstream(input, std::ios::binary).write(data.data(), data.size());
  }
  int port = start_target({"--file", ns, "--size", "8m", "--json", report});
  ASSERT_GT(port, 0);

  ASSERT_EQ(run(host("write", port,
                     "--data '" + input + "' --offset 4096 2> " + tmpdir() + "/write.log")),
            0)
      << slurp(tmpdir() + "/write.log");
  EXPECT_NE(slurp(tmpdir() + "/write.log").find("pad"), std::string::npos)
      << "the CLI must say it padded the last LBA:\n"
      << slurp(tmpdir() + "/write.log");
  ASSERT_EQ(run(host("read", port,
                     "--data '" + readback + "' --offset 4096 --length " + std::to_string(size) +
                         " 2> " + tmpdir() + "/read.log")),
            0)
      << slurp(tmpdir() + "/read.log");
  ASSERT_EQ(run(host("identify", port, "--json > " + tmpdir() + "/identify.json")), 0);
  ASSERT_EQ(stop_target(), 0) << slurp(target_log_);

  const std::string want = sha256(input);
  ASSERT_FALSE(want.empty());
  EXPECT_EQ(sha256(readback), want);
  EXPECT_EQ(slurp(readback).size(), size) << "read --length writes exactly the bytes asked";

  nlohmann::json id = nlohmann::json::parse(slurp(tmpdir() + "/identify.json"));
  EXPECT_EQ(id["controller"]["ioccsz"], 260) << id.dump(2);
  nlohmann::json t = nlohmann::json::parse(slurp(report));
  // 3 MiB in MDTS-sized commands by RDMA READ, and the padded 512-byte tail in-capsule.
  EXPECT_GE(t["writes"]["rdma_read"].get<uint64_t>(), 3u) << t.dump(2);
  EXPECT_GE(t["writes"]["in_capsule"].get<uint64_t>(), 1u) << t.dump(2);
}

TEST_F(CliTest, ReadPastTheEndNamesLbaOutOfRange) {
  int port = start_target({"--ram-size", "1m"});
  ASSERT_GT(port, 0);
  const std::string log = tmpdir() + "/oor.log";
  EXPECT_NE(run(host("read", port,
                     "--data /dev/null --offset " + std::to_string((1 << 20) - 512) +
                         " --length 1024 2> " + log)),
            0);
  EXPECT_NE(slurp(log).find("LBA Out of Range"), std::string::npos) << slurp(log);
  EXPECT_EQ(stop_target(), 0) << slurp(target_log_);
}

TEST_F(CliTest, WritePastTheEndLandsNothing) {
  int port = start_target({"--ram-size", "1m", "--json", tmpdir() + "/wpe.json"});
  ASSERT_GT(port, 0);
  const std::string input = tmpdir() + "/two-lbas.bin";
  std::ofstream(input, std::ios::binary) << std::string(1024, 'x');
  const std::string log = tmpdir() + "/wpe.log";
  // The first LBA would fit, the second would not: nothing may be written.
  EXPECT_EQ(run(host("write", port,
                     "--data '" + input + "' --offset " + std::to_string((1 << 20) - 512) + " 2> " +
                         log)),
            2);
  EXPECT_NE(slurp(log).find("past the namespace end"), std::string::npos) << slurp(log);
  ASSERT_EQ(stop_target(), 0) << slurp(target_log_);
  nlohmann::json t = nlohmann::json::parse(slurp(tmpdir() + "/wpe.json"));
  EXPECT_EQ(t["writes"]["in_capsule"].get<uint64_t>() + t["writes"]["rdma_read"].get<uint64_t>(),
            0u)
      << t.dump(2);
}

// --poll-groups auto (the default): one poll group per CPU the process may run on (the target
// inherits this test's affinity mask), at most 64; the start-up line and the --json report say
// how many and why. The queues of one host with two I/O queues are served by every group (at
// most three: its admin queue and two I/O queues). --cpu N pins one thread: auto runs one group.
TEST_F(CliTest, PollGroupsAutoRunsOnePerAllowedCpuAndSaysWhy) {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  ASSERT_EQ(sched_getaffinity(0, sizeof(mask), &mask), 0);
  const int cpus = CPU_COUNT(&mask);
  const int want = std::min(cpus, 64);
  const std::string why = "auto: " + std::to_string(cpus) + (cpus == 1 ? " CPU" : " CPUs") +
                          (cpus > 64 ? ", at most 64" : "");
  const std::string report = tmpdir() + "/groups.json";
  int port = start_target({"--ram-size", "1m", "--poll-groups", "auto", "--json", report});
  ASSERT_GT(port, 0);
  ASSERT_EQ(run(host("identify", port,
                     "--nr-io-queues 2 > /dev/null 2> " + tmpdir() + "/groups-identify.log")),
            0)
      << slurp(tmpdir() + "/groups-identify.log");
  ASSERT_EQ(stop_target(), 0) << slurp(target_log_);
  const std::string line = "nvmf-target: " + std::to_string(want) +
                           (want == 1 ? " poll group (" : " poll groups (") + why + ")\n";
  EXPECT_NE(slurp(target_log_).find(line), std::string::npos) << line << slurp(target_log_);
  nlohmann::json t = nlohmann::json::parse(slurp(report));
  EXPECT_EQ(t["poll_groups"].get<int>(), want) << t.dump(2);
  EXPECT_EQ(t["poll_groups_reason"].get<std::string>(), why) << t.dump(2);
  std::set<uint32_t> served;
  for (const auto& q : t["per_queue"]) served.insert(q["group"].get<uint32_t>());
  EXPECT_EQ(served.size(), static_cast<size_t>(std::min(want, 3))) << t.dump(2);

  port = start_target(
      {"--ram-size", "1m", "--poll-groups", "auto", "--cpu", std::to_string(first_cpu(mask))});
  ASSERT_GT(port, 0);
  ASSERT_EQ(stop_target(), 0) << slurp(target_log_);
  EXPECT_NE(slurp(target_log_)
                .find("nvmf-target: 1 poll group (auto: --cpu " + std::to_string(first_cpu(mask)) +
                      " pins one thread)\n"),
            std::string::npos)
      << slurp(target_log_);
}

// `nvmf-target rpc` against a running target's control socket: the methods it lists, the
// subsystem as served, counters that moved with a host's I/O, errors naming the field, a second
// target refused on the same socket, the socket removed at a clean stop.
TEST_F(CliTest, ControlSocketAnswersWhileTheTargetServes) {
  const std::string sock = tmpdir() + "/control.sock";
  unlink(sock.c_str());
  int port = start_target({"--ram-size", "8m", "--rpc-socket", sock});
  ASSERT_GT(port, 0);
  struct stat st {};
  ASSERT_EQ(stat(sock.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const std::string rpc =
      "timeout 60 '" + runfile("target/nvmf-target") + "' rpc -s '" + sock + "' ";
  auto call = [&](const std::string& args) {
    const std::string out = tmpdir() + "/rpc.out", err = tmpdir() + "/rpc.err";
    const int rc = run(rpc + args + " > " + out + " 2> " + err);
    return std::tuple{rc, slurp(out), slurp(err)};
  };
  auto [rc, out, err] = call("rpc_get_methods");
  ASSERT_EQ(rc, 0) << err;
  nlohmann::json methods = nlohmann::json::parse(out);
  for (const char* m : {"nvmf_get_stats", "nvmf_get_subsystems", "nvmf_subsystem_get_controllers",
                        "nvmf_subsystem_get_qpairs", "rpc_get_methods"}) {
    EXPECT_NE(std::find(methods.begin(), methods.end(), m), methods.end()) << m << out;
  }
  std::tie(rc, out, err) = call("nvmf_get_subsystems");
  ASSERT_EQ(rc, 0) << err;
  nlohmann::json subs = nlohmann::json::parse(out);
  ASSERT_EQ(subs.size(), 2u) << out;
  EXPECT_EQ(subs[0]["subtype"], "Discovery");
  EXPECT_EQ(subs[1]["nqn"], kNqn);
  EXPECT_EQ(subs[1]["listen_addresses"][0]["traddr"], env_->target_addr);
  EXPECT_EQ(subs[1]["listen_addresses"][0]["trsvcid"], std::to_string(port));
  EXPECT_EQ(subs[1]["namespaces"][0]["nsid"], 1);
  EXPECT_EQ(subs[1]["namespaces"][0]["size_bytes"], 8u << 20);

  const std::string data = tmpdir() + "/rpc-data.bin";
  std::ofstream(data, std::ios::binary) << std::string(64 * 1024, 'r');
  ASSERT_EQ(run(host("write", port, "--data '" + data + "' 2> " + tmpdir() + "/rpc-write.log")), 0)
      << slurp(tmpdir() + "/rpc-write.log");
  std::tie(rc, out, err) = call("nvmf_get_stats");
  ASSERT_EQ(rc, 0) << err;
  nlohmann::json stats = nlohmann::json::parse(out);
  EXPECT_GE(
      stats["writes"]["rdma_read"].get<uint64_t>() + stats["writes"]["in_capsule"].get<uint64_t>(),
      1u)
      << out;
  EXPECT_EQ(stats["controllers"]["created"], 1) << out;
  EXPECT_EQ(stats["poll_groups"].size(), stats["poll_group_count"].get<size_t>()) << out;

  std::tie(rc, out, err) = call("nvmf_subsystem_get_controllers '{\"nqn\": \"nqn.none\"}'");
  EXPECT_EQ(rc, 1);
  EXPECT_NE(err.find("\"nqn\": no subsystem \"nqn.none\" (code -32602)"), std::string::npos) << err;
  std::tie(rc, out, err) = call("nvmf_get_stats '{\"verbose\": true}'");
  EXPECT_EQ(rc, 1);
  EXPECT_NE(err.find("unknown parameter \"verbose\""), std::string::npos) << err;
  std::tie(rc, out, err) = call("nvmf_no_such_method");
  EXPECT_EQ(rc, 1);
  EXPECT_NE(err.find("(code -32601)"), std::string::npos) << err;

  // A second target on the same socket is refused before it serves anyone.
  const std::string second = tmpdir() + "/second.log";
  EXPECT_EQ(run("timeout 60 '" + runfile("target/nvmf-target") + "' -a " + env_->target_addr +
                " -s 0 --ram-size 1m --rpc-socket '" + sock + "' > " + second + " 2>&1"),
            2);
  EXPECT_NE(slurp(second).find("is in use by a running process"), std::string::npos)
      << slurp(second);

  ASSERT_EQ(stop_target(), 0) << slurp(target_log_);
  EXPECT_NE(stat(sock.c_str(), &st), 0) << "the socket outlived the target";
  std::tie(rc, out, err) = call("rpc_get_methods");
  EXPECT_EQ(rc, 1);
  EXPECT_NE(err.find("no nvmf-target listens on " + sock), std::string::npos) << err;
}

// Who may connect, changed on a running target over the control socket: a host not allowed is
// refused, one added is admitted, one removed while it runs I/O is disconnected (its bench
// ends) and refused again.
TEST_F(CliTest, ControlSocketHostChangesTakeEffectOnARunningTarget) {
  const std::string sock = tmpdir() + "/hosts.sock";
  unlink(sock.c_str());
  int port = start_target({"--ram-size", "8m", "--rpc-socket", sock});
  ASSERT_GT(port, 0);
  const std::string rpc =
      "timeout 60 '" + runfile("target/nvmf-target") + "' rpc -s '" + sock + "' ";
  auto call = [&](const std::string& args) {
    const std::string out = tmpdir() + "/hosts-rpc.out";
    const int rc = run(rpc + args + " > " + out + " 2>&1");
    return std::pair{rc, slurp(out)};
  };
  const std::string hostnqn = "nqn.2014-08.org.nvmexpress:uuid:cli-e2e-allowed";
  const std::string as_host = "--hostnqn " + hostnqn + " ";
  const std::string sub = "'{\"nqn\": \"" + std::string(kNqn) + "\", ";
  auto [rc, out] = call("nvmf_subsystem_allow_any_host " + sub + "\"allow_any_host\": false}'");
  ASSERT_EQ(rc, 0) << out;
  const std::string identify_log = tmpdir() + "/hosts-identify.log";
  EXPECT_NE(run(host("identify", port, as_host + "> /dev/null 2> " + identify_log)), 0);
  EXPECT_NE(slurp(identify_log).find("Invalid Host"), std::string::npos) << slurp(identify_log);

  std::tie(rc, out) = call("nvmf_subsystem_add_host " + sub + "\"host\": \"" + hostnqn + "\"}'");
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(run(host("identify", port, as_host + "> /dev/null 2> " + identify_log)), 0)
      << slurp(identify_log);
  std::tie(rc, out) = call("nvmf_get_subsystems");
  ASSERT_EQ(rc, 0) << out;
  nlohmann::json subs = nlohmann::json::parse(out);
  EXPECT_EQ(subs[1]["allow_any_host"], false) << out;
  EXPECT_EQ(subs[1]["hosts"], nlohmann::json::parse("[{\"nqn\": \"" + hostnqn + "\"}]")) << out;

  // A bench of 60 s, removed after its controller appears: it ends long before.
  const std::string bench_log = tmpdir() + "/hosts-bench.log";
  const pid_t bench = spawn(
      host("bench", port,
           as_host + "--rw randread --bs 4k --iodepth 4 --runtime 60 > " + bench_log + " 2>&1"));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool connected = false;
  while (!connected && std::chrono::steady_clock::now() < deadline) {
    std::tie(rc, out) =
        call("nvmf_subsystem_get_controllers '{\"nqn\": \"" + std::string(kNqn) + "\"}'");
    connected = rc == 0 && nlohmann::json::parse(out).size() == 1;
  }
  ASSERT_TRUE(connected) << out << slurp(bench_log);
  const auto removed_at = std::chrono::steady_clock::now();
  std::tie(rc, out) = call("nvmf_subsystem_remove_host " + sub + "\"host\": \"" + hostnqn + "\"}'");
  ASSERT_EQ(rc, 0) << out;
  int status = 0;
  ASSERT_EQ(waitpid(bench, &status, 0), bench);
  const auto took = std::chrono::steady_clock::now() - removed_at;
  EXPECT_LT(took, std::chrono::seconds(40)) << slurp(bench_log);
  std::tie(rc, out) =
      call("nvmf_subsystem_get_controllers '{\"nqn\": \"" + std::string(kNqn) + "\"}'");
  EXPECT_EQ(out, "[]\n");
  EXPECT_NE(run(host("identify", port, as_host + "> /dev/null 2> " + identify_log)), 0);
  EXPECT_NE(slurp(identify_log).find("Invalid Host"), std::string::npos) << slurp(identify_log);
  std::tie(rc, out) = call("nvmf_subsystem_remove_host " + sub + "\"host\": \"" + hostnqn + "\"}'");
  EXPECT_EQ(rc, 1);
  EXPECT_NE(out.find("is not allowed (code -32602)"), std::string::npos) << out;
  EXPECT_NE(slurp(target_log_).find("controller 1 freed (host removed from the subsystem"),
            std::string::npos)
      << slurp(target_log_);
}

// Namespaces changed on a running target over the control socket: added (RAM and a file),
// resized and removed while a bench runs on namespace 1 with no error; the host sees each change
// at its next Identify; bad requests are named.
TEST_F(CliTest, ControlSocketNamespaceChangesReachHostsWithoutDisturbingOthers) {
  int port = start_rpc_target("ns");
  ASSERT_GT(port, 0);
  const std::string nqn = "\"nqn\": \"" + std::string(kNqn) + "\"";
  const std::string file = tmpdir() + "/ns2.img";
  const std::string bench_log = tmpdir() + "/ns-bench.log";
  const pid_t bench = spawn(
      host("bench", port, "--rw randrw --bs 4k --iodepth 8 --runtime 8 > " + bench_log + " 2>&1"));
  auto [rc, out] = call("nvmf_subsystem_add_ns", "{" + nqn + ", \"namespace\": {\"path\": \"" +
                                                     file + "\", \"size\": 4194304}}");
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(out, "2\n") << "the lowest free NSID";
  std::tie(rc, out) =
      call("nvmf_subsystem_add_ns", "{" + nqn +
                                        ", \"namespace\": {\"nsid\": 5, \"ram_size\": 2097152, "
                                        "\"uuid\": \"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0\"}}");
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(out, "5\n");
  std::tie(rc, out) = call("nvmf_get_subsystems", "{}");
  ASSERT_EQ(rc, 0) << out;
  nlohmann::json subs = nlohmann::json::parse(out);
  ASSERT_EQ(subs[1]["namespaces"].size(), 3u) << out;
  EXPECT_EQ(subs[1]["namespaces"][1]["path"], file);
  EXPECT_EQ(subs[1]["namespaces"][1]["size_bytes"], 4u << 20);
  EXPECT_EQ(subs[1]["namespaces"][2]["uuid"], "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0");
  std::tie(rc, out) =
      call("nvmf_subsystem_resize_ns", "{" + nqn + ", \"nsid\": 2, \"size\": 8388608}");
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(out, "8388608\n");
  struct stat st {};
  ASSERT_EQ(stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 8 << 20) << "the file was extended";
  std::tie(rc, out) = call("nvmf_subsystem_remove_ns", "{" + nqn + ", \"nsid\": 2}");
  ASSERT_EQ(rc, 0) << out;

  // Refused, each naming what is wrong.
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"{" + nqn + ", \"namespace\": {\"ram_size\": 1048576, \"path\": \"/x\"}}",
       "give exactly one of \"path\" (a file or block device) and \"ram_size\""},
      {"{" + nqn + ", \"namespace\": {\"nsid\": 5, \"ram_size\": 1048576}}",
       "\"nsid\": NSID 5 is in use"},
      {"{" + nqn + ", \"namespace\": {\"ram_size\": 1000}}",
       "\"ram_size\": not a whole number of LBAs of 512 bytes"},
      {"{" + nqn + ", \"namespace\": {\"ram_size\": 1048576, \"nguid\": \"xyz\"}}",
       "\"nguid\": \"xyz\" is not 32 hex digits"},
      {"{" + nqn + ", \"namespace\": {\"ram_size\": 1048576, \"bdev_name\": \"Malloc0\"}}",
       "unknown parameter \"bdev_name\""},
      {"{" + nqn + ", \"namespace\": {\"path\": \"/nonexistent/x.img\"}}", "/nonexistent/x.img"},
  };
  for (const auto& [params, message] : bad) {
    std::tie(rc, out) = call("nvmf_subsystem_add_ns", params);
    EXPECT_EQ(rc, 1) << params;
    EXPECT_NE(out.find(message), std::string::npos) << params << "\n" << out;
  }
  std::tie(rc, out) = call("nvmf_subsystem_remove_ns", "{" + nqn + ", \"nsid\": 2}");
  EXPECT_EQ(rc, 1);
  EXPECT_NE(out.find("\"nsid\": NSID 2 is not active"), std::string::npos) << out;
  std::tie(rc, out) =
      call("nvmf_subsystem_resize_ns", "{" + nqn + ", \"nsid\": 5, \"size\": 4095}");
  EXPECT_EQ(rc, 1);
  EXPECT_NE(out.find("is not a whole number of LBAs"), std::string::npos) << out;

  int status = 0;
  ASSERT_EQ(waitpid(bench, &status, 0), bench);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << slurp(bench_log);

  // Namespace 1 goes: the host now finds namespace 5 first, at its new size.
  std::tie(rc, out) =
      call("nvmf_subsystem_resize_ns", "{" + nqn + ", \"nsid\": 5, \"size\": 16777216}");
  ASSERT_EQ(rc, 0) << out;
  std::tie(rc, out) = call("nvmf_subsystem_remove_ns", "{" + nqn + ", \"nsid\": 1}");
  ASSERT_EQ(rc, 0) << out;
  const std::string id_json = tmpdir() + "/ns-identify.json";
  ASSERT_EQ(run(host("identify", port, "--json > " + id_json)), 0);
  nlohmann::json id = nlohmann::json::parse(slurp(id_json));
  EXPECT_EQ(id["namespace"]["nsid"], 5) << id.dump(2);
  EXPECT_EQ(id["namespace"]["size_bytes"], 16u << 20) << id.dump(2);
  EXPECT_EQ(id["controller"]["nn"], 1024);
  const std::string target_log = slurp(target_log_);
  EXPECT_NE(target_log.find("namespace 2 removed (file " + file), std::string::npos) << target_log;
  EXPECT_EQ(target_log.find("still in flight"), std::string::npos) << target_log;
}

// Subsystems and their ports changed on a running target: one created, given a namespace and a
// listener, is discovered and served; its listener removed, it is neither; deleted under a
// running bench, the bench ends and the subsystem is freed; the first subsystem is untouched.
TEST_F(CliTest, ControlSocketCreatesServesAndDeletesASubsystem) {
  int port = start_rpc_target("subsys");
  ASSERT_GT(port, 0);
  const std::string nqn2 = "nqn.2024-01.io.nvmf-rdma:cli-e2e-second";
  const std::string sub2 = "\"nqn\": \"" + nqn2 + "\"";
  const std::string at =
      "\"listen_address\": {\"trtype\": \"RDMA\", \"adrfam\": \"IPv4\", "
      "\"traddr\": \"" +
      env_->target_addr + "\", \"trsvcid\": \"" + std::to_string(port) + "\"}";
  auto on_second = [&](const std::string& sub, const std::string& args) {
    std::string cmd = host(sub, port, args);
    const std::string first = "-n " + std::string(kNqn);
    cmd.replace(cmd.find(first), first.size(), "-n " + nqn2);
    return cmd;
  };
  auto discovered = [&]() {
    const std::string out = tmpdir() + "/subsys-discover.out";
    EXPECT_EQ(
        run("timeout 60 '" + runfile("host/nvmf-host") + "' discover -a " + env_->target_addr +
            " -s " + std::to_string(port) + " -w " + env_->host_addr + " > " + out + " 2>&1"),
        0)
        << slurp(out);
    return slurp(out);
  };
  auto [rc, out] = call("nvmf_create_subsystem", "{" + sub2 +
                                                     ", \"allow_any_host\": true, "
                                                     "\"serial_number\": \"SN-SECOND\"}");
  ASSERT_EQ(rc, 0) << out;
  std::tie(rc, out) =
      call("nvmf_subsystem_add_ns", "{" + sub2 + ", \"namespace\": {\"ram_size\": 4194304}}");
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(discovered().find(nqn2), std::string::npos) << "no listener yet";
  std::tie(rc, out) = call("nvmf_subsystem_add_listener", "{" + sub2 + ", " + at + "}");
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(discovered().find("subnqn:  " + nqn2), std::string::npos);
  const std::string id_json = tmpdir() + "/subsys-identify.json";
  ASSERT_EQ(run(on_second("identify", "--json > " + id_json)), 0) << slurp(id_json);
  nlohmann::json id = nlohmann::json::parse(slurp(id_json));
  EXPECT_EQ(id["controller"]["sn"], "SN-SECOND") << id.dump(2);
  EXPECT_EQ(id["namespace"]["size_bytes"], 4u << 20) << id.dump(2);

  std::tie(rc, out) = call("nvmf_subsystem_remove_listener", "{" + sub2 + ", " + at + "}");
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(discovered().find(nqn2), std::string::npos);
  const std::string refused = tmpdir() + "/subsys-refused.log";
  EXPECT_NE(run(on_second("identify", "> /dev/null 2> " + refused)), 0);

  // Refused, each naming what is wrong.
  const std::vector<std::tuple<std::string, std::string, std::string>> bad = {
      {"nvmf_create_subsystem", "{" + sub2 + "}", "subsystem " + nqn2 + " exists"},
      {"nvmf_create_subsystem", "{\"nqn\": \"nqn.2014-08.org.nvmexpress.discovery\"}",
       "not the discovery NQN"},
      {"nvmf_create_subsystem",
       "{\"nqn\": \"nqn.x\", \"serial_number\": \"" + std::string(21, 'S') + "\"}",
       "\"serial_number\": 1..20 printable ASCII characters"},
      {"nvmf_subsystem_remove_listener", "{" + sub2 + ", " + at + "}",
       nqn2 + " is not served there"},
      {"nvmf_subsystem_add_listener",
       "{" + sub2 + ", \"listen_address\": {\"traddr\": \"192.0.2.1\", \"trsvcid\": \"4420\"}}",
       "\"listen_address\": rdma_bind_addr"},
      {"nvmf_subsystem_remove_listener",
       "{" + sub2 + ", \"listen_address\": {\"traddr\": \"192.0.2.1\", \"trsvcid\": \"4420\"}}",
       "no port of this target listens on \"192.0.2.1:4420\""},
      {"nvmf_subsystem_add_listener",
       "{" + sub2 + ", \"listen_address\": {\"trtype\": \"TCP\", \"traddr\": \"x\"}}",
       "only RDMA is served"},
      {"nvmf_delete_subsystem", "{\"nqn\": \"nqn.none\"}", "no subsystem \"nqn.none\""},
  };
  for (const auto& [method, params, message] : bad) {
    std::tie(rc, out) = call(method, params);
    EXPECT_EQ(rc, 1) << method << " " << params;
    EXPECT_NE(out.find(message), std::string::npos) << method << " " << params << "\n" << out;
  }

  // A listener on an address no port has: a new port, listening at once, serving only nqn2;
  // its last subsystem removed, it stops listening.
  std::tie(rc, out) =
      call("nvmf_subsystem_add_listener", "{" + sub2 + ", \"listen_address\": {\"traddr\": \"" +
                                              env_->target_addr + "\", \"trsvcid\": \"0\"}}");
  ASSERT_EQ(rc, 0) << out;
  std::tie(rc, out) = call("nvmf_get_subsystems", "{}");
  ASSERT_EQ(rc, 0) << out;
  nlohmann::json listed = nlohmann::json::parse(out);
  ASSERT_EQ(listed.size(), 3u) << out;
  ASSERT_EQ(listed[2]["listen_addresses"].size(), 1u) << out;
  const std::string second_port = listed[2]["listen_addresses"][0]["trsvcid"];
  EXPECT_NE(second_port, std::to_string(port)) << out;
  EXPECT_EQ(listed[1]["listen_addresses"].size(), 1u) << "the first subsystem is not there";
  const std::string via_second = tmpdir() + "/subsys-second.json";
  std::string second_identify = on_second("identify", "--json > " + via_second);
  const std::string first_port = " -s " + std::to_string(port) + " ";
  second_identify.replace(second_identify.find(first_port), first_port.size(),
                          " -s " + second_port + " ");
  ASSERT_EQ(run(second_identify), 0) << slurp(via_second);
  EXPECT_EQ(nlohmann::json::parse(slurp(via_second))["controller"]["sn"], "SN-SECOND");
  std::tie(rc, out) = call("nvmf_subsystem_remove_listener",
                           "{" + sub2 + ", \"listen_address\": {\"traddr\": \"" +
                               env_->target_addr + "\", \"trsvcid\": \"" + second_port + "\"}}");
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(run(second_identify), 0) << "the added port stopped listening";
  EXPECT_NE(slurp(target_log_).find("port 2: listening on "), std::string::npos)
      << slurp(target_log_);

  // Deleted while a bench of 60 s runs on it: the bench ends long before.
  std::tie(rc, out) = call("nvmf_subsystem_add_listener", "{" + sub2 + ", " + at + "}");
  ASSERT_EQ(rc, 0) << out;
  const std::string bench_log = tmpdir() + "/subsys-bench.log";
  const pid_t bench = spawn(on_second(
      "bench", "--rw randread --bs 4k --iodepth 4 --runtime 60 > " + bench_log + " 2>&1"));
  ASSERT_TRUE(wait_controllers(nqn2, 1)) << slurp(bench_log);
  const auto deleted_at = std::chrono::steady_clock::now();
  std::tie(rc, out) = call("nvmf_delete_subsystem", "{" + sub2 + "}");
  ASSERT_EQ(rc, 0) << out;
  int status = 0;
  ASSERT_EQ(waitpid(bench, &status, 0), bench);
  EXPECT_LT(std::chrono::steady_clock::now() - deleted_at, std::chrono::seconds(40))
      << slurp(bench_log);
  std::tie(rc, out) = call("nvmf_get_subsystems", "{}");
  ASSERT_EQ(rc, 0) << out;
  nlohmann::json subs = nlohmann::json::parse(out);
  ASSERT_EQ(subs.size(), 2u) << out;
  EXPECT_EQ(subs[1]["nqn"], kNqn);
  EXPECT_EQ(discovered().find(nqn2), std::string::npos);
  ASSERT_EQ(run(host("identify", port, "> /dev/null")), 0) << "the first subsystem is untouched";
  const std::string log = slurp(target_log_);
  EXPECT_NE(log.find("subsystem " + nqn2 + " deleted"), std::string::npos) << log;
  EXPECT_EQ(log.find("still bound"), std::string::npos) << log;
}

// load_config on a running target (nvmetcli restore semantics): the running configuration
// saved, edited and loaded back applies only the difference (a subsystem and namespaces added,
// then removed, a port added then removed) while a bench on the untouched subsystem runs without
// an error; loading the same file again changes nothing; a file that readdresses a port or
// changes a serial is refused whole.
TEST_F(CliTest, ControlSocketLoadConfigAppliesOnlyTheDifference) {
  int port = start_rpc_target("load");
  ASSERT_GT(port, 0);
  const std::string file = tmpdir() + "/load.json";
  auto load = [&](const nlohmann::json& config) {
    std::ofstream(file) << config.dump(2);
    return call("load_config", "{\"path\": \"" + file + "\"}");
  };
  const std::string bench_log = tmpdir() + "/load-bench.log";
  const pid_t bench = spawn(
      host("bench", port, "--rw randrw --bs 4k --iodepth 4 --runtime 8 > " + bench_log + " 2>&1"));
  auto [rc, out] = call("save_config", "{}");
  ASSERT_EQ(rc, 0) << out;
  const nlohmann::json saved = nlohmann::json::parse(out);
  const std::string nqn2 = "nqn.2024-01.io.nvmf-rdma:cli-e2e-loaded";
  nlohmann::json more = saved;
  more["subsystems"][0]["namespaces"].push_back(
      {{"nsid", 2}, {"enable", 1}, {"device", {{"ram_size", 4194304}}}});
  more["subsystems"].push_back(
      {{"nqn", nqn2},
       {"attr", {{"allow_any_host", "1"}}},
       {"namespaces", {{{"nsid", 1}, {"device", {{"ram_size", 2097152}}}}}}});
  more["ports"][0]["subsystems"].push_back(nqn2);
  std::tie(rc, out) = load(more);
  ASSERT_EQ(rc, 0) << out;
  nlohmann::json report = nlohmann::json::parse(out);
  EXPECT_EQ(report["subsystems_created"], nlohmann::json::array({nqn2})) << out;
  EXPECT_EQ(report["namespaces_added"].size(), 2u) << out;
  EXPECT_EQ(report["listeners_added"].size(), 1u) << out;
  EXPECT_TRUE(report["namespaces_removed"].empty() && report["subsystems_deleted"].empty() &&
              report["listeners_removed"].empty())
      << out;
  std::tie(rc, out) = load(more);
  ASSERT_EQ(rc, 0) << out;
  const nlohmann::json again = nlohmann::json::parse(out);
  for (const auto& [key, value] : again.items()) {
    EXPECT_TRUE(value.empty()) << "the same file again changes nothing: " << out;
  }
  std::tie(rc, out) = call("nvmf_get_subsystems", "{}");
  ASSERT_EQ(rc, 0) << out;
  nlohmann::json subs = nlohmann::json::parse(out);
  ASSERT_EQ(subs.size(), 3u) << out;
  EXPECT_EQ(subs[1]["namespaces"].size(), 2u) << out;
  EXPECT_EQ(subs[2]["nqn"], nqn2) << out;
  EXPECT_EQ(subs[2]["listen_addresses"].size(), 1u) << out;

  // A port new in the file listens and serves what it links.
  nlohmann::json new_port = more;
  new_port["ports"].push_back(saved["ports"][0]);
  new_port["ports"][1]["portid"] = 7;
  new_port["ports"][1]["addr"]["trsvcid"] = "0";
  std::tie(rc, out) = load(new_port);
  ASSERT_EQ(rc, 0) << out;
  report = nlohmann::json::parse(out);
  EXPECT_EQ(report["ports_added"], nlohmann::json::array({7})) << out;
  EXPECT_EQ(report["listeners_added"].size(), 1u) << out;
  std::tie(rc, out) = call("nvmf_get_subsystems", "{}");
  ASSERT_EQ(nlohmann::json::parse(out)[1]["listen_addresses"].size(), 2u) << out;

  // Refused whole: nothing of the file is applied.
  nlohmann::json readdressed = saved;
  readdressed["ports"][0]["addr"]["trsvcid"] = "4499";
  std::tie(rc, out) = load(readdressed);
  EXPECT_EQ(rc, 1);
  EXPECT_NE(out.find("port 1: its address differs from the running port's"), std::string::npos)
      << out;
  nlohmann::json new_serial = saved;
  new_serial["subsystems"][0]["attr"]["serial"] = "CHANGED";
  std::tie(rc, out) = load(new_serial);
  EXPECT_EQ(rc, 1);
  EXPECT_NE(out.find("serial, model, firmware, version, cntlid range or qid_max differ"),
            std::string::npos)
      << out;
  std::tie(rc, out) = call("load_config", "{\"path\": \"/nonexistent/config.json\"}");
  EXPECT_EQ(rc, 1);
  EXPECT_NE(out.find("/nonexistent/config.json"), std::string::npos) << out;
  std::tie(rc, out) = call("nvmf_get_subsystems", "{}");
  ASSERT_EQ(nlohmann::json::parse(out).size(), 3u) << "the refused files changed nothing: " << out;

  // Back to the saved file: the added port, subsystem and namespace go.
  std::tie(rc, out) = load(saved);
  ASSERT_EQ(rc, 0) << out;
  report = nlohmann::json::parse(out);
  EXPECT_EQ(report["ports_removed"], nlohmann::json::array({7})) << out;
  EXPECT_EQ(report["subsystems_deleted"], nlohmann::json::array({nqn2})) << out;
  EXPECT_EQ(report["namespaces_removed"],
            nlohmann::json::parse("[{\"nqn\": \"" + std::string(kNqn) + "\", \"nsid\": 2}]"))
      << out;
  int status = 0;
  ASSERT_EQ(waitpid(bench, &status, 0), bench);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << slurp(bench_log);
  std::tie(rc, out) = call("nvmf_get_subsystems", "{}");
  subs = nlohmann::json::parse(out);
  ASSERT_EQ(subs.size(), 2u) << out;
  EXPECT_EQ(subs[1]["namespaces"].size(), 1u) << out;
}

// ANA over the control socket: the listener's states listed, one set inaccessible (I/O to its
// namespace then gets the path status, another group's namespace is served), bad parameters
// named; save_config writes the groups and load_config of that file changes nothing, of one
// moving a namespace to another group moves it in place.
TEST_F(CliTest, ControlSocketAnaStatesAreSetListedSavedAndLoaded) {
  int port = start_rpc_target("ana");
  ASSERT_GT(port, 0);
  const std::string nqn = "{\"nqn\": \"" + std::string(kNqn) + "\"";
  auto [rc, out] = call("nvmf_subsystem_add_ns",
                        nqn + ", \"namespace\": {\"ram_size\": 1048576, \"anagrpid\": 2}}");
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(out.find("2"), 0u) << "NSID 2: " << out;
  std::tie(rc, out) = call("nvmf_subsystem_get_listeners", nqn + "}");
  ASSERT_EQ(rc, 0) << out;
  nlohmann::json listeners = nlohmann::json::parse(out);
  ASSERT_EQ(listeners.size(), 1u) << out;
  EXPECT_EQ(listeners[0]["ana_states"],
            nlohmann::json::parse(R"([{"ana_group": 1, "ana_state": "optimized"},
                                      {"ana_group": 2, "ana_state": "optimized"}])"))
      << out;
  const std::string at = ", \"listen_address\": " + listeners[0]["address"].dump();
  std::tie(rc, out) = call("nvmf_subsystem_listener_set_ana_state",
                           nqn + at + ", \"anagrpid\": 2, \"ana_state\": \"inaccessible\"}");
  ASSERT_EQ(rc, 0) << out;
  std::tie(rc, out) = call("nvmf_subsystem_get_listeners", nqn + "}");
  EXPECT_EQ(nlohmann::json::parse(out)[0]["ana_states"][1]["ana_state"], "inaccessible") << out;
  // A Read of namespace 2 gets the path status (conform reads the ANA log, then the namespace
  // of the group that refuses I/O); namespace 1, in group 1, is still read.
  const std::string log = tmpdir() + "/ana-conform.log";
  const std::string path_status = "--cases ana.path-status > " + log + " 2>&1";
  EXPECT_EQ(run(host("conform", port, path_status)), 0) << slurp(log);
  EXPECT_NE(slurp(log).find("Read of NSID 2 (group 2, inaccessible): SCT 3h SC 02h Asymmetric "
                            "Access Inaccessible"),
            std::string::npos)
      << slurp(log);
  EXPECT_EQ(run(host("read", port, "-d /dev/null -l 4096 > " + log + " 2>&1")), 0) << slurp(log);
  // Bad parameters are named; nothing changes.
  for (const auto& [params, word] : std::vector<std::pair<std::string, std::string>>{
           {nqn + at + ", \"ana_state\": \"standby\"}", "\"ana_state\""},
           {nqn + at + ", \"anagrpid\": 0, \"ana_state\": \"optimized\"}", "\"anagrpid\""},
           {nqn + at + ", \"anagrpid\": 129, \"ana_state\": \"optimized\"}", "\"anagrpid\""},
           {nqn + ", \"listen_address\": {\"traddr\": \"" + env_->target_addr +
                "\", \"trsvcid\": \"1\"}, \"ana_state\": \"optimized\"}",
            "is not served on"},
           {nqn + at + "}", "\"ana_state\""}}) {
    std::tie(rc, out) = call("nvmf_subsystem_listener_set_ana_state", params);
    EXPECT_EQ(rc, 1) << params;
    EXPECT_NE(out.find(word), std::string::npos) << params << " -> " << out;
  }
  // A namespace's group is 1..ANAGRPMAX (128), as nvmet's ana_grpid.
  for (const char* grpid : {"0", "129"}) {
    std::tie(rc, out) = call("nvmf_subsystem_add_ns", nqn +
                                                          ", \"namespace\": {\"ram_size\": "
                                                          "1048576, \"anagrpid\": " +
                                                          grpid + "}}");
    EXPECT_EQ(rc, 1) << grpid;
    EXPECT_NE(out.find("\"anagrpid\""), std::string::npos) << grpid << " -> " << out;
  }
  // save_config carries the namespace's group and the port's groups (the per-subsystem state
  // set above is not the port's); the same file again changes nothing.
  std::tie(rc, out) = call("save_config", "{}");
  ASSERT_EQ(rc, 0) << out;
  nlohmann::json saved = nlohmann::json::parse(out);
  EXPECT_EQ(saved["subsystems"][0]["namespaces"][1]["ana"]["grpid"], 2) << out;
  EXPECT_EQ(saved["ports"][0]["ana_groups"],
            nlohmann::json::parse(R"([{"grpid": 1, "ana": {"state": "optimized"}}])"))
      << out;
  const std::string file = tmpdir() + "/ana.json";
  saved["ports"][0]["ana_groups"].push_back({{"grpid", 2}, {"ana", {{"state", "non-optimized"}}}});
  std::ofstream(file) << saved.dump(2);
  std::tie(rc, out) = call("load_config", "{\"path\": \"" + file + "\"}");
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(nlohmann::json::parse(out)["ana_states_changed"],
            nlohmann::json::parse(R"([{"portid": 1, "grpid": 2, "state": "non-optimized"}])"))
      << out;
  std::tie(rc, out) = call("load_config", "{\"path\": \"" + file + "\"}");
  ASSERT_EQ(rc, 0) << out;
  const nlohmann::json again = nlohmann::json::parse(out);
  for (const auto& [key, value] : again.items()) {
    EXPECT_TRUE(value.empty()) << "the same file again changes nothing: " << out;
  }
  // Namespace 2 moved to group 3 in place: still served (through the optimized group 3).
  saved["subsystems"][0]["namespaces"][1]["ana"]["grpid"] = 3;
  std::ofstream(file) << saved.dump(2);
  std::tie(rc, out) = call("load_config", "{\"path\": \"" + file + "\"}");
  ASSERT_EQ(rc, 0) << out;
  nlohmann::json report = nlohmann::json::parse(out);
  EXPECT_TRUE(report["namespaces_removed"].empty()) << out;
  EXPECT_EQ(report["namespace_groups_changed"],
            nlohmann::json::parse("[{\"nqn\": \"" + std::string(kNqn) +
                                  "\", \"nsid\": 2, \"anagrpid\": 3}]"))
      << out;
  EXPECT_EQ(run(host("conform", port, path_status)), 0) << slurp(log);
  EXPECT_NE(slurp(log).find("n/a"), std::string::npos)
      << "no namespace left in a group that refuses I/O: " << slurp(log);
  // A file that moves a namespace to a group past ANAGRPMAX is refused whole, naming the key.
  saved["subsystems"][0]["namespaces"][1]["ana"]["grpid"] = 200;
  std::ofstream(file) << saved.dump(2);
  std::tie(rc, out) = call("load_config", "{\"path\": \"" + file + "\"}");
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("grpid"), std::string::npos) << out;
  std::tie(rc, out) = call("nvmf_get_subsystems", "{}");
  EXPECT_NE(out.find("\"anagrpid\": 3"), std::string::npos) << "unchanged: " << out;
}

// The host library's asynchronous events from a running target: a namespace added, resized and
// removed over the control socket reaches the callback as added, resized and removed (the
// Changed Namespace List read and each NSID identified again); an ANA state set on the
// listener reaches it as an ANA Change, after which ana_state() has the new state.
TEST_F(CliTest, LibraryReportsNamespaceAndAnaEventsFromALiveTarget) {
  int port = start_rpc_target("events");
  ASSERT_GT(port, 0);
  std::mutex mu;
  std::condition_variable cv;
  std::vector<host::AsyncEvent> events;
  host::HostOptions o;
  o.traddr = env_->target_addr;
  o.trsvcid = std::to_string(port);
  o.host_traddr = env_->host_addr;
  o.subnqn = kNqn;
  o.async_events = true;
  o.on_async_event = [&](const host::AsyncEvent& e) {
    std::lock_guard<std::mutex> lock(mu);
    events.push_back(e);
    cv.notify_all();
  };
  auto c = host::Controller::connect(o);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  ASSERT_TRUE((*c)->ana_reporting());
  EXPECT_EQ((*c)->ana_state(), proto::kAnaOptimized);
  // The next notice of type `info` within 30 s; the others before it are dropped (adding or
  // removing a namespace also moves the ANA log: an ANA Change comes too).
  uint64_t seen = 0;
  auto next_event = [&](uint8_t info) -> std::optional<host::AsyncEvent> {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      if (!cv.wait_for(lock, std::chrono::seconds(30), [&] { return !events.empty(); })) {
        return std::nullopt;
      }
      host::AsyncEvent e = events.front();
      events.erase(events.begin());
      ++seen;
      if (e.type == 2 && e.info == info) return e;
    }
  };
  const std::string nqn = "{\"nqn\": \"" + std::string(kNqn) + "\"";
  using Kind = host::NamespaceChange::Kind;
  auto expect_change = [&](Kind kind, uint64_t nsze) {
    std::optional<host::AsyncEvent> e = next_event(0);  // Namespace Attribute Changed
    ASSERT_TRUE(e.has_value()) << "no Namespace Attribute Changed within 30 s";
    EXPECT_EQ(e->log_page, proto::kLogChangedNamespaceList);
    EXPECT_EQ(e->changed_nsids, std::vector<uint32_t>{2});
    ASSERT_EQ(e->namespaces.size(), 1u);
    EXPECT_EQ(e->namespaces[0].nsid, 2u);
    EXPECT_EQ(host::namespace_change_name(e->namespaces[0].kind),
              host::namespace_change_name(kind));
    EXPECT_EQ(e->namespaces[0].nsze, nsze);
  };
  auto [rc, out] = call("nvmf_subsystem_add_ns", nqn + ", \"namespace\": {\"ram_size\": 1048576}}");
  ASSERT_EQ(rc, 0) << out;
  expect_change(Kind::kAdded, 2048);
  std::tie(rc, out) = call("nvmf_subsystem_resize_ns", nqn + ", \"nsid\": 2, \"size\": 2097152}");
  ASSERT_EQ(rc, 0) << out;
  expect_change(Kind::kResized, 4096);
  std::tie(rc, out) = call("nvmf_subsystem_remove_ns", nqn + ", \"nsid\": 2}");
  ASSERT_EQ(rc, 0) << out;
  expect_change(Kind::kRemoved, 0);

  std::tie(rc, out) = call("nvmf_subsystem_get_listeners", nqn + "}");
  ASSERT_EQ(rc, 0) << out;
  const std::string at = ", \"listen_address\": " + nlohmann::json::parse(out)[0]["address"].dump();
  std::tie(rc, out) = call("nvmf_subsystem_listener_set_ana_state",
                           nqn + at + ", \"ana_state\": \"non_optimized\"}");
  ASSERT_EQ(rc, 0) << out;
  // The ANA Change of this state (those of the namespace changes before it came first).
  std::optional<host::AsyncEvent> ana;
  while ((ana = next_event(3)) && (*c)->ana_state() != proto::kAnaNonOptimized) {
  }
  ASSERT_TRUE(ana.has_value()) << "no ANA Change to non-optimized within 30 s";
  EXPECT_EQ(ana->log_page, proto::kLogAna);
  EXPECT_EQ((*c)->ana_state(), proto::kAnaNonOptimized);
  EXPECT_GE((*c)->ana_generation(), 2u) << "the log read at connect, then again";
  EXPECT_GE((*c)->async_events(), seen) << "every event the callback saw was counted";
  EXPECT_GE(seen, 4u) << "three namespace changes and an ANA Change at least";
  EXPECT_TRUE((*c)->disconnect().ok());
}

TEST_F(CliTest, BadArgumentsAreNamed) {
  const std::string log = tmpdir() + "/bad.log";
  EXPECT_EQ(run("'" + runfile("target/nvmf-target") + "' -a " + env_->target_addr +
                " --ram-size 1m --lba-size 1000 2> " + log),
            2);
  EXPECT_NE(slurp(log).find("lba-size"), std::string::npos) << slurp(log);
}

}  // namespace
}  // namespace nvmf::e2e

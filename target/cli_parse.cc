// SPDX-License-Identifier: BSD-3-Clause
// parse_size.
#include "target/cli_parse.h"

#include <cctype>
#include <string>

namespace nvmf::target {
namespace {

Status not_a_size(std::string_view text, std::string_view option) {
  return Status::invalid_argument(std::string(option) + ": '" + std::string(text) +
                                  "' is not a byte count (e.g. 4096, 64m, 1g)");
}

// Shift for a suffix ("", "k", "kb", "kib", ...); -1 when unknown.
int suffix_shift(std::string suffix) {
  for (char& c : suffix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (suffix.empty()) return 0;
  if (suffix.size() == 3 && suffix.substr(1) == "ib") suffix.resize(1);
  if (suffix.size() == 2 && suffix[1] == 'b') suffix.resize(1);
  if (suffix.size() != 1) return -1;
  switch (suffix[0]) {
    case 'k':
      return 10;
    case 'm':
      return 20;
    case 'g':
      return 30;
    case 't':
      return 40;
    default:
      return -1;
  }
}

}  // namespace

Result<uint64_t> parse_size(std::string_view text, std::string_view option) {
  size_t i = 0;
  uint64_t value = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    uint64_t digit = static_cast<uint64_t>(text[i] - '0');
    if (value > (UINT64_MAX - digit) / 10) {
      return Status::invalid_argument(std::string(option) + ": '" + std::string(text) +
                                      "' overflows 64 bits");
    }
    value = value * 10 + digit;
    ++i;
  }
  if (i == 0) return not_a_size(text, option);
  int shift = suffix_shift(std::string(text.substr(i)));
  if (shift < 0) return not_a_size(text, option);
  if (shift > 0 && value > (UINT64_MAX >> shift)) {
    return Status::invalid_argument(std::string(option) + ": '" + std::string(text) +
                                    "' overflows 64 bits");
  }
  return value << shift;
}

Status apply_dhchap_options(const std::vector<std::string>& host_keys,
                            const std::vector<std::string>& ctrl_keys, const std::string& hash,
                            const std::string& dhgroup, HostKeys& keys) {
  auto split = [](const std::string& v, const char* option, std::string* nqn,
                  std::string* secret) -> Status {
    const size_t eq = v.find('=');
    // A key given without its HOSTNQN= may hold '=' (base64 padding): never quote the value.
    if (eq == std::string::npos || eq == 0 || eq > 223 || v.rfind("DHHC-1:", 0) == 0) {
      return Status::invalid_argument(std::string(option) + ": expected HOSTNQN=DHHC-1:hh:...:");
    }
    *nqn = v.substr(0, eq);
    *secret = v.substr(eq + 1);
    return {};
  };
  std::vector<std::string>
      given;  // the hosts of --dhchap-key: --dhchap-hash/-dhgroup apply to them
  for (const std::string& v : host_keys) {
    std::string nqn, text;
    NVMF_RETURN_IF_ERROR(split(v, "--dhchap-key", &nqn, &text));
    given.push_back(nqn);
    auto secret = dhchap::Secret::parse(text);
    dhchap::cleanse(text.data(), text.size());
    if (!secret.ok()) return secret.status().annotate("--dhchap-key for '" + nqn + "'");
    keys[nqn].key = std::move(*secret);
  }
  for (const std::string& v : ctrl_keys) {
    std::string nqn, text;
    NVMF_RETURN_IF_ERROR(split(v, "--dhchap-ctrl-key", &nqn, &text));
    auto secret = dhchap::Secret::parse(text);
    dhchap::cleanse(text.data(), text.size());
    if (!secret.ok()) return secret.status().annotate("--dhchap-ctrl-key for '" + nqn + "'");
    auto it = keys.find(nqn);
    if (it == keys.end()) {
      return Status::invalid_argument("--dhchap-ctrl-key for '" + nqn +
                                      "': that host has no --dhchap-key");
    }
    it->second.ctrl_key = std::move(*secret);
  }
  if (!hash.empty()) {
    auto h = dhchap::parse_hash(hash);
    if (!h) {
      return Status::invalid_argument("--dhchap-hash '" + hash +
                                      "': hmac(sha256), hmac(sha384) or hmac(sha512)");
    }
    for (const std::string& nqn : given) keys[nqn].hash = *h;
  }
  if (!dhgroup.empty()) {
    auto g = dhchap::parse_dhgroup(dhgroup);
    if (!g) {
      return Status::invalid_argument("--dhchap-dhgroup '" + dhgroup +
                                      "': null, ffdhe2048, ffdhe3072, ffdhe4096, ffdhe6144 or "
                                      "ffdhe8192");
    }
    for (const std::string& nqn : given) keys[nqn].dhgroup = *g;
  }
  return {};
}

}  // namespace nvmf::target

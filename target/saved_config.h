// SPDX-License-Identifier: BSD-3-Clause
// The running configuration written as nvmetcli JSON (the control socket's save_config), which
// `nvmf-target --config` reads back (target/config.h).
#ifndef NVMF_TARGET_SAVED_CONFIG_H_
#define NVMF_TARGET_SAVED_CONFIG_H_

#include <nlohmann/json.hpp>
#include <vector>

#include "target/target_options.h"

namespace nvmf::target {

// `ports` and `subsystems` as `nvmetcli save` writes a configfs tree: "hosts" (every allowed
// host, sorted), "ports" (portid, addr, param.inline_data_size, referrals, linked subsystems),
// "subsystems" (nqn, attr with nvmetcli's string values, allowed_hosts, namespaces with
// device.path, nguid and uuid in the dashed form, enable 1, buffered_io). A RAM namespace has
// device.ram_size (bytes) instead of a path: nvmf-target's own key, which nvmetcli does not
// know. Every field is written explicitly (serial, NGUIDs), so a restart from the file shows
// hosts the same identities. A host with a DH-HMAC-CHAP key in `keys` is listed with nvmetcli's
// "dhchap" group {key, ctrl_key, hash, dhgroup} (the secrets, as nvmetcli saves them: the file is
// the key store; keep it private).
nlohmann::json nvmet_config_json(const std::vector<PortOptions>& ports,
                                 const std::vector<SubsystemOptions>& subsystems,
                                 const HostKeys* keys = nullptr);

// "1.3" or "1.4.1" (the tertiary number only when not 0), as nvmet's attr_version shows VS.
std::string version_text(uint32_t version);

}  // namespace nvmf::target

#endif  // NVMF_TARGET_SAVED_CONFIG_H_

// SPDX-License-Identifier: BSD-3-Clause
// The target's statistics as JSON: what `nvmf-target --json` writes at exit and what the control
// socket's nvmf_get_stats answers while it runs (docs/target.md lists the keys).
#ifndef NVMF_TARGET_STATS_JSON_H_
#define NVMF_TARGET_STATS_JSON_H_

#include <nlohmann/json.hpp>

#include "target/target.h"

namespace nvmf::target {

// The whole report: settings (from `options`, as the target was started), negotiation,
// counters in total, per controller and per queue (live and the last freed ones), request
// states, resources. Thread-safe (Target::stats()). The second form reports the snapshot `s`
// the caller took (so that its own additions agree with the report).
nlohmann::json stats_report(const Target& target, const TargetOptions& options);
nlohmann::json stats_report(const Target& target, const TargetOptions& options,
                            const TargetStats& s);

// Per request state (target/request_state.h): times entered and how many are in it now.
nlohmann::json request_states_json(const CounterSnapshot& c);

}  // namespace nvmf::target

#endif  // NVMF_TARGET_STATS_JSON_H_

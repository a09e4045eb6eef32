// HostOptions helpers; see options.h.
#include "host/options.h"

namespace nvmf::host {

const char* poll_mode_name(PollMode mode) { return mode == PollMode::kBusy ? "busy" : "event"; }

}  // namespace nvmf::host

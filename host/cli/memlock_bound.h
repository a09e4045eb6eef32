// SPDX-License-Identifier: BSD-3-Clause
// What nvmf-host registers for RDMA at the least, from its options, before it opens any device.
#ifndef NVMF_HOST_CLI_MEMLOCK_BOUND_H_
#define NVMF_HOST_CLI_MEMLOCK_BOUND_H_

#include <cstdint>
#include <vector>

namespace nvmf::host {

// A lower bound, in bytes, of the memory nvmf-host registers (ibv_reg_mr, pinned against
// RLIMIT_MEMLOCK) once connected: the admin queue's SQE, CQE and setup-data buffers (32 entries,
// one 4 KiB page), one I/O queue's of `queue_size` entries (the target may grant fewer queues
// than asked, never none), and for bench each job's `iodepth` buffers of the largest of
// `bench_bs` bytes (`bench_jobs` 0 or `bench_bs` empty: no bench).
uint64_t host_memlock_bytes(uint32_t queue_size, uint32_t bench_jobs, uint32_t bench_iodepth,
                            const std::vector<uint32_t>& bench_bs);

}  // namespace nvmf::host

#endif  // NVMF_HOST_CLI_MEMLOCK_BOUND_H_

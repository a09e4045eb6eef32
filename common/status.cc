// SPDX-License-Identifier: BSD-3-Clause
// nvmf::Status: names, errno mapping and formatting.
#include "common/status.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace nvmf {
namespace {

// strerror_r is the GNU variant (returns char*) under glibc with _GNU_SOURCE, the XSI one
// (returns int) elsewhere; these overloads accept either.
[[maybe_unused]] const char* strerror_result(const char* gnu, const char*) { return gnu; }
[[maybe_unused]] const char* strerror_result(int xsi, const char* buf) {
  return xsi == 0 ? buf : "Unknown error";
}

}  // namespace

std::string_view status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kInvalidArgument:
      return "INVALID_ARGUMENT";
    case StatusCode::kUnavailable:
      return "UNAVAILABLE";
    case StatusCode::kTimeout:
      return "TIMEOUT";
    case StatusCode::kRejected:
      return "REJECTED";
    case StatusCode::kNvmeError:
      return "NVME_ERROR";
    case StatusCode::kIo:
      return "IO";
    case StatusCode::kInternal:
      return "INTERNAL";
    case StatusCode::kNotFound:
      return "NOT_FOUND";
    case StatusCode::kResourceExhausted:
      return "RESOURCE_EXHAUSTED";
  }
  return "UNKNOWN";
}

StatusCode status_code_from_errno(int err) {
  switch (err) {
    case ECONNREFUSED:
    case ECONNRESET:
    case ECONNABORTED:
    case EHOSTUNREACH:
    case ENETUNREACH:
    case ENETDOWN:
    case EADDRNOTAVAIL:
    case ENODEV:
    case ENXIO:
    case ENOTCONN:
    case EAGAIN:
      return StatusCode::kUnavailable;
    case ETIMEDOUT:
      return StatusCode::kTimeout;
    case EINVAL:
    case ERANGE:
    case EAFNOSUPPORT:
    case EADDRINUSE:
    case EOPNOTSUPP:
    case EBADF:
    case EFAULT:
      return StatusCode::kInvalidArgument;
    case ENOMEM:
    case ENOBUFS:
    case ENOSPC:
    case EMFILE:
    case ENFILE:
      return StatusCode::kResourceExhausted;
    case ENOENT:
      return StatusCode::kNotFound;
    case EIO:
      return StatusCode::kIo;
    default:
      return StatusCode::kInternal;
  }
}

std::string errno_string(int err) {
  char buf[128];
  return strerror_result(strerror_r(err, buf, sizeof(buf)), buf);
}

Status::Status(StatusCode code, std::string message) : code_(code) {
  if (code != StatusCode::kOk) message_ = std::move(message);
}

Status Status::invalid_argument(std::string message) {
  return Status(StatusCode::kInvalidArgument, std::move(message));
}
Status Status::unavailable(std::string message) {
  return Status(StatusCode::kUnavailable, std::move(message));
}
Status Status::timeout(std::string message) {
  return Status(StatusCode::kTimeout, std::move(message));
}
Status Status::rejected(std::string message) {
  return Status(StatusCode::kRejected, std::move(message));
}
Status Status::io(std::string message) { return Status(StatusCode::kIo, std::move(message)); }
Status Status::internal(std::string message) {
  return Status(StatusCode::kInternal, std::move(message));
}
Status Status::not_found(std::string message) {
  return Status(StatusCode::kNotFound, std::move(message));
}
Status Status::resource_exhausted(std::string message) {
  return Status(StatusCode::kResourceExhausted, std::move(message));
}

Status Status::nvme_error(uint16_t status_field, std::string message) {
  Status s(StatusCode::kNvmeError, std::move(message));
  s.nvme_status_ = status_field;
  return s;
}

Status Status::from_errno(std::string_view operation, int err, std::string_view detail) {
  std::string msg(operation);
  if (!detail.empty()) {
    msg += " (";
    msg += detail;
    msg += ")";
  }
  msg += ": " + errno_string(err) + " (errno " + std::to_string(err) + ")";
  Status s(status_code_from_errno(err), std::move(msg));
  s.os_errno_ = err;
  return s;
}

std::string Status::to_string() const {
  if (ok()) return "OK";
  std::string out(status_code_name(code_));
  out += ": ";
  out += message_;
  if (nvme_status_) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), " [nvme status 0x%04x]", *nvme_status_);
    out += buf;
  }
  return out;
}

Status Status::annotate(std::string_view context) const& { return Status(*this).annotate(context); }

Status Status::annotate(std::string_view context) && {
  if (!ok() && !context.empty()) message_ = std::string(context) + ": " + message_;
  return std::move(*this);
}

Status Status::with_errno(int err) && {
  if (!ok()) os_errno_ = err;
  return std::move(*this);
}

namespace internal {

void die_on_bad_result_access(const Status& status) {
  std::fprintf(stderr, "nvmf::Result::value() called on an error: %s\n",
               status.to_string().c_str());
  std::abort();
}

const Status& ok_status_ref() {
  static const Status* const kOk = new Status();
  return *kOk;
}

}  // namespace internal
}  // namespace nvmf

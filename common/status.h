// SPDX-License-Identifier: BSD-3-Clause
// Error values for library boundaries: nvmf::Status, nvmf::Result<T> and the propagation macros.
#ifndef NVMF_COMMON_STATUS_H_
#define NVMF_COMMON_STATUS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace nvmf {

// What went wrong, coarse enough for a caller to decide what to do next.
enum class StatusCode : uint8_t {
  kOk = 0,
  kInvalidArgument,    // Bad input from the caller or the user (address, option, size).
  kUnavailable,        // Peer or device not reachable: connection refused, unreachable, no device.
  kTimeout,            // A wait ran out (CM event, completion, I/O).
  kRejected,           // The peer rejected the RDMA CM connection request.
  kNvmeError,          // The peer answered with a non-zero NVMe status (see nvme_status()).
  kIo,                 // Data path failure: completion error, short transfer, backend I/O error.
  kInternal,           // A bug or a state that should not happen.
  kNotFound,           // A named thing does not exist (namespace, subsystem, device).
  kResourceExhausted,  // Out of memory, queue entries, buffers or device resources.
};

// Upper-case name of a code, e.g. "INVALID_ARGUMENT". Never null.
std::string_view status_code_name(StatusCode code);

// Ok, or an error: a code, a human message, and optionally the errno and the NVMe status field
// that caused it. Cheap when ok (no allocation); not meant for the fast path when not ok.
class [[nodiscard]] Status {
 public:
  // An ok status.
  Status() = default;
  // An error (or ok when code == kOk; the message is then dropped).
  Status(StatusCode code, std::string message);

  // Factories, one per code (their meanings at StatusCode). Messages should name the operation,
  // e.g. "resolve 10.0.0.1:4420".
  static Status invalid_argument(std::string message);
  static Status unavailable(std::string message);
  static Status timeout(std::string message);
  static Status rejected(std::string message);
  static Status io(std::string message);
  static Status internal(std::string message);
  static Status not_found(std::string message);
  static Status resource_exhausted(std::string message);
  // kNvmeError carrying the 16-bit CQE status field (CQE DW3 bits 31:16, phase bit included as
  // bit 0, so SC is bits 8:1, SCT 11:9, DNR 15; NVMe Base 2.0 4.6.1).
  static Status nvme_error(uint16_t status_field, std::string message);

  // A failed system or verbs call: "ibv_create_cq: Cannot allocate memory (errno 12)".
  // The code is derived from errno (status_code_from_errno); os_errno() returns `err`.
  // `detail`, when not empty, is appended as "ibv_create_cq (detail): ...".
  static Status from_errno(std::string_view operation, int err, std::string_view detail = {});

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  // The message without the code name; empty when ok.
  const std::string& message() const { return message_; }
  // The errno recorded by from_errno() or with_errno(), if any.
  std::optional<int> os_errno() const { return os_errno_; }
  // The NVMe status field recorded by nvme_error(), if any.
  std::optional<uint16_t> nvme_status() const { return nvme_status_; }

  // "OK", or "CODE: message", with " [nvme status 0x....]" appended when one is carried.
  std::string to_string() const;

  // The same error with "context: " prefixed to the message. Ok stays ok.
  Status annotate(std::string_view context) const&;
  Status annotate(std::string_view context) &&;
  // Records an errno on an existing status (e.g. a CM event's status).
  Status with_errno(int err) &&;

  friend bool operator==(const Status&, const Status&) = default;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  std::optional<int> os_errno_;
  std::optional<uint16_t> nvme_status_;
};

// An ok status, for readability at return sites.
inline Status ok_status() { return Status(); }

// Maps an errno to a code: ECONNREFUSED/EHOSTUNREACH/ENETUNREACH/ENODEV/... -> kUnavailable,
// ETIMEDOUT -> kTimeout, EINVAL/ERANGE/... -> kInvalidArgument, ENOMEM/ENOBUFS/ENOSPC ->
// kResourceExhausted, ENOENT -> kNotFound, EIO -> kIo, anything else (0 included) -> kInternal.
StatusCode status_code_from_errno(int err);

// Thread-safe strerror: "Cannot allocate memory".
std::string errno_string(int err);

namespace internal {
// Prints `status` and the call site to stderr and aborts. Used by Result<T>::value() on error.
[[noreturn]] void die_on_bad_result_access(const Status& status);
// A static ok Status that Result<T>::status() can return by reference.
const Status& ok_status_ref();
}  // namespace internal

// A value of type T, or a non-ok Status. Like std::expected<T, Status> (absent in g++ 12).
// Move-only T is fine. Constructing from an ok Status is a bug and yields kInternal.
template <typename T>
class [[nodiscard]] Result {
  static_assert(!std::is_same_v<std::remove_cvref_t<T>, Status>, "use Status, not Result<Status>");
  static_assert(!std::is_reference_v<T>, "Result<T&> is not supported");

 public:
  using value_type = T;

  // An error. `status` must not be ok.
  Result(Status status) : storage_(std::in_place_index<0>, std::move(status)) {  // NOLINT
    if (std::get<0>(storage_).ok()) {
      storage_.template emplace<0>(StatusCode::kInternal, "Result constructed from an ok Status");
    }
  }
  // A value, from anything T can be constructed from.
  template <typename U = T>
  requires(std::is_constructible_v<T, U&&> && !std::is_same_v<std::remove_cvref_t<U>, Status> &&
           !std::is_same_v<std::remove_cvref_t<U>, Result>) Result(U&& value)
      : storage_(std::in_place_index<1>, std::forward<U>(value)) {}  // NOLINT

  Result(const Result&) = default;
  Result(Result&&) = default;
  Result& operator=(const Result&) = default;
  Result& operator=(Result&&) = default;

  bool ok() const { return storage_.index() == 1; }

  // The error, or an ok Status when a value is held.
  const Status& status() const& { return ok() ? internal::ok_status_ref() : std::get<0>(storage_); }
  Status status() && { return ok() ? Status() : std::move(std::get<0>(storage_)); }

  // The value. Aborts (printing the status) when there is none: check ok() first.
  T& value() & {
    check();
    return std::get<1>(storage_);
  }
  const T& value() const& {
    check();
    return std::get<1>(storage_);
  }
  T&& value() && {
    check();
    return std::get<1>(std::move(storage_));
  }
  // The value, or `fallback` when there is none.
  template <typename U>
  T value_or(U&& fallback) const& {
    return ok() ? std::get<1>(storage_) : static_cast<T>(std::forward<U>(fallback));
  }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  void check() const {
    if (!ok()) internal::die_on_bad_result_access(std::get<0>(storage_));
  }

  std::variant<Status, T> storage_;
};

namespace internal {
inline const Status& as_status(const Status& s) { return s; }
inline Status as_status(Status&& s) { return std::move(s); }
template <typename T>
const Status& as_status(const Result<T>& r) {
  return r.status();
}
template <typename T>
Status as_status(Result<T>&& r) {
  return std::move(r).status();
}
}  // namespace internal

}  // namespace nvmf

#define NVMF_STATUS_CONCAT_INNER_(a, b) a##b
#define NVMF_STATUS_CONCAT_(a, b) NVMF_STATUS_CONCAT_INNER_(a, b)

// Evaluates `expr` (a Status or a Result<T>); if it is an error, returns it from the enclosing
// function (which returns Status or Result<U>).
#define NVMF_RETURN_IF_ERROR(expr)                                               \
  do {                                                                           \
    auto&& nvmf_return_if_error_ = (expr);                                       \
    if (!nvmf_return_if_error_.ok()) {                                           \
      return ::nvmf::internal::as_status(                                        \
          std::forward<decltype(nvmf_return_if_error_)>(nvmf_return_if_error_)); \
    }                                                                            \
  } while (0)

// Evaluates `expr` (a Result<T>); on error returns its Status from the enclosing function,
// otherwise moves the value into `lhs`, which may declare a variable:
//   NVMF_ASSIGN_OR_RETURN(auto cq, CompletionQueue::create(ctx, 128));
//   NVMF_ASSIGN_OR_RETURN(existing_var, parse_port("4420"));
// `lhs` must not contain unparenthesised commas (use an alias for such types).
#define NVMF_ASSIGN_OR_RETURN(lhs, expr) \
  NVMF_ASSIGN_OR_RETURN_IMPL_(NVMF_STATUS_CONCAT_(nvmf_result_, __COUNTER__), lhs, expr)
#define NVMF_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return std::move(tmp).status();    \
  lhs = std::move(tmp).value()

#endif  // NVMF_COMMON_STATUS_H_

// SPDX-License-Identifier: BSD-3-Clause
// Input: reads a fuzz input as a stream of little-endian integers and byte runs; past the end
// every read gives zeroes, so any input decodes to some sequence of operations.
#ifndef NVMF_FUZZ_INPUT_H_
#define NVMF_FUZZ_INPUT_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

namespace nvmf::fuzz {

class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  bool empty() const { return pos_ >= size_; }
  uint8_t u8() { return pos_ < size_ ? data_[pos_++] : 0; }
  // Each read is its own statement: the input format must not depend on the compiler's order
  // of evaluating operands (and callers read into locals before passing several reads on).
  uint16_t u16() {
    uint16_t lo = u8();
    return static_cast<uint16_t>(lo | (u8() << 8));
  }
  uint32_t u32() {
    uint32_t lo = u16();
    return lo | (static_cast<uint32_t>(u16()) << 16);
  }
  uint64_t u64() {
    uint64_t lo = u32();
    return lo | (static_cast<uint64_t>(u32()) << 32);
  }
  // Up to `n` bytes (fewer at the end of the input).
  std::span<const uint8_t> bytes(size_t n) {
    n = std::min(n, size_ - std::min(pos_, size_));
    std::span<const uint8_t> out(data_ + pos_, n);
    pos_ += n;
    return out;
  }
  // Exactly sizeof(T) bytes into a trivially copyable T (zero-filled past the end).
  template <typename T>
  T object() {
    T t{};
    copy_to(&t, bytes(sizeof(T)));
    return t;
  }
  // memcpy of `b` to `dst`, also for an empty `b` (whose data() may be null).
  static void copy_to(void* dst, std::span<const uint8_t> b) {
    if (!b.empty()) std::memcpy(dst, b.data(), b.size());
  }
  // A length-prefixed (one byte) string of raw bytes.
  std::string text() {
    auto b = bytes(u8());
    return std::string(b.begin(), b.end());
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace nvmf::fuzz

#endif  // NVMF_FUZZ_INPUT_H_

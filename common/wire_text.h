// SPDX-License-Identifier: BSD-3-Clause
// Text that came from a peer (NQNs from a Connect, strings from Identify or a Discovery Log
// Page, a host's addresses): made safe to put in a log line or a JSON string.
//
// Such bytes are data, not text we trust: they may be invalid UTF-8 (which makes a JSON writer
// throw), hold control characters that end a log line or drive a terminal, C1 controls, the
// Unicode line and paragraph separators (U+2028/2029, line breaks to JavaScript and some
// viewers) or bidirectional overrides that reorder what a reader sees.
#ifndef NVMF_COMMON_WIRE_TEXT_H_
#define NVMF_COMMON_WIRE_TEXT_H_

#include <string>
#include <string_view>

namespace nvmf {

// Returns `bytes` as valid UTF-8 with nothing that can break a line or reorder it:
//  - printable ASCII (20h..7Eh) and valid UTF-8 sequences of other characters are kept;
//  - C0 controls (00h..1Fh) and DEL (7Fh) become "\xNN" (two lowercase hex digits);
//  - C1 controls (U+0080..U+009F), U+2028, U+2029 and the bidirectional marks and overrides
//    (U+200E, U+200F, U+202A..U+202E, U+2066..U+2069) become "\uNNNN";
//  - every byte that does not start or continue a valid UTF-8 sequence (RFC 3629: no overlong
//    forms, no surrogates, nothing above U+10FFFF, no truncated sequence) becomes "\xNN".
// A backslash in the input is kept as is. The result is at most 6 bytes per input byte.
std::string escape_wire_text(std::string_view bytes);

// True when escape_wire_text(`text`) == `text`: valid UTF-8 and none of the characters above.
bool is_safe_wire_text(std::string_view text);

}  // namespace nvmf

#endif  // NVMF_COMMON_WIRE_TEXT_H_

// JSON string handling on raw tokens. The reader takes strings straight out of the document and
// only unescapes the rare ones that contain a backslash, so most names are never copied before
// they are interned.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace bubblescope::kineto {

// The still-escaped content of a string token as raw_json_token() returns it (opening quote,
// content, closing quote, then possibly whitespace). False if the token is not a string.
bool StringTokenContent(std::string_view token, std::string_view* content);

// The still-escaped text of an object key, given the pointer simdjson returns for it (the first
// byte after the opening quote). The document must already have passed simdjson's stage 1, which
// guarantees the closing quote exists.
std::string_view KeyText(const char* key_begin);

// Unescapes string content. Returns `content` itself when it holds no backslash, otherwise a view
// of `*scratch` (valid until the next call with the same scratch). \u escapes become UTF-8,
// surrogate pairs included; a lone surrogate becomes U+FFFD.
std::string_view UnescapeJsonString(std::string_view content, std::string* scratch);

// Offset of the first byte that is not part of valid UTF-8, or npos when all of `text` is valid.
// `*truncated_sequence` tells whether that byte starts a multi-byte sequence that is valid so far
// but cut off by the end of `text` (a file cut mid-character).
size_t FirstInvalidUtf8(std::string_view text, bool* truncated_sequence);

// Offset of the first raw control character (a byte below 0x20) inside a JSON string of `text`,
// or npos. simdjson finds these only as the block's error, its position past them (at the end of
// the document or of the value being read), so the messages that name the byte take it from here.
size_t FirstUnescapedControl(std::string_view text);

}  // namespace bubblescope::kineto

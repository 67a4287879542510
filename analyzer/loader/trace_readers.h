// The list of input formats the loader offers each file to (readers/trace_reader.h).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "readers/trace_reader.h"

namespace bubblescope {

// One of each reader, in the order they are offered a file: formats told by magic bytes first,
// Kineto JSON (which also claims damaged JSON by its name) last. A new format is one line here.
std::vector<std::unique_ptr<TraceReader>> MakeTraceReaders();

// The reader of a file whose first bytes are `head`: the first of `readers` that claims it by its
// content, else the first that claims it by its name too (a digest named *.json is the digest
// reader's all the same); nullptr when none does.
TraceReader* ClaimingReader(const std::vector<std::unique_ptr<TraceReader>>& readers,
                            std::string_view head, std::string_view path);

// The formats' names, for the message about a file none of them claims: "kineto, digest".
std::string TraceFormatNames(const std::vector<std::unique_ptr<TraceReader>>& readers);

// ClaimingReader, or the one-line error for a file none claims: "<path>: not a trace of a format
// bubblescope reads (<the formats>)".
absl::StatusOr<TraceReader*> ReaderOf(const std::vector<std::unique_ptr<TraceReader>>& readers,
                                      std::string_view head, const std::string& path);

}  // namespace bubblescope

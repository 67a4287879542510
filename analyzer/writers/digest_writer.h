// One rank's model as a digest file (docs/digest.md): a compact, deterministic binary that the
// digest reader (readers/digest_reader.h) turns back into the same Rank.
//
// Encode writes every member of the Rank it is given except source_path and source_format (a
// digest is read back under its own path and as a digest, as a trace is). Shrinking a rank to what
// the analyses read is a separate step, index::ReduceForDigest (index/digest_reduction.h):
// `bubblescope digest` applies both.
#pragma once

#include <string>

#include "bubblescope/trace.h"

namespace bubblescope::digest {

// The digest file's bytes: the same Rank gives the same bytes, on every machine.
std::string Encode(const Rank& rank);

}  // namespace bubblescope::digest

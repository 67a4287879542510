// NCCL's NVTX payloads in an Nsight Systems export. Since NCCL 2.23 each NCCL API range (domain
// "NCCL") carries a binary payload described by a registered schema: the communicator's id, the
// message size and, for ncclSend / ncclRecv, the peer's rank in that communicator (NCCL's
// src/include/nvtx_payload_schemas.h); the communicator's creation (ncclCommInitRank and its
// relatives) carries its size and this process's rank in it. `nsys export` keeps the payloads only
// with --include-blobs=true: NVTX_EVENTS.binaryData then holds a 32-byte header (domain id,
// schema id, payload size, payload offset: little-endian 64-bit words) and the payload, and
// NVTX_PAYLOAD_SCHEMA_ENTRIES says where each named field lies. Without them a reader still has
// the ranges' names and times.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "readers/nsys_database.h"

namespace bubblescope::nsys {

// The fields bubblescope reads; each is unset where the payload has no such field.
struct NcclPayload {
  std::optional<uint64_t> communicator;
  std::optional<int64_t> bytes;
  std::optional<int32_t> peer;   // the peer's rank in the communicator
  std::optional<int32_t> ranks;  // the communicator's size
  std::optional<int32_t> rank;   // this process's rank in the communicator
};

// One field of a payload schema, as NVTX_PAYLOAD_SCHEMA_ENTRIES lists it.
struct PayloadField {
  std::string name;
  int64_t type = 0;    // NVTX_PAYLOAD_ENTRY_TYPE_*
  int64_t offset = 0;  // bytes from the payload's start
};

class PayloadSchemas {
 public:
  // Reads the schemas of the export (none when the tables are absent). Error: a damaged table.
  absl::Status Load(const Database& database);
  bool empty() const { return schemas_.empty(); }

  // The NCCL fields of one binaryData cell; nullopt when the cell is no payload this reader
  // understands (short, unknown schema, fields out of bounds).
  std::optional<NcclPayload> Decode(std::string_view blob) const;

 private:
  // Each schema's fields by (domain id, schema id). Every process registers NCCL's schemas
  // again: the first registration wins.
  absl::flat_hash_map<std::pair<uint64_t, uint64_t>, std::vector<PayloadField>> schemas_;
};

// The bytes of a binaryData cell: the export writes a BLOB, and some tools re-save it as hex text.
std::string PayloadBytes(std::string_view cell);

}  // namespace bubblescope::nsys

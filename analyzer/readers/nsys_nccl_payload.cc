#include "readers/nsys_nccl_payload.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace bubblescope::nsys {
namespace {

constexpr size_t kHeaderBytes = 32;

uint64_t LittleEndian(std::string_view bytes, size_t offset, size_t width) {
  uint64_t value = 0;
  for (size_t i = 0; i < width; ++i) {
    value |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[offset + i])) << (8 * i);
  }
  return value;
}

// Width in bytes and signedness of the integer entry types NCCL's schemas use (nvToolsExtPayload.h
// numbers them); 0 for every other type, which this reader does not decode.
struct IntegerType {
  size_t width = 0;
  bool is_signed = false;
};

IntegerType IntegerTypeOf(int64_t type) {
  switch (type) {
    case 1:
    case 11:
      return {1, true};  // char, int8
    case 2:
    case 12:
      return {1, false};  // unsigned char, uint8
    case 3:
    case 13:
      return {2, true};  // short, int16
    case 4:
    case 14:
      return {2, false};  // unsigned short, uint16
    case 5:
    case 15:
      return {4, true};  // int, int32
    case 6:
    case 16:
      return {4, false};  // unsigned int, uint32
    case 7:
    case 9:
    case 17:
      return {8, true};  // long, long long, int64
    case 8:
    case 10:
    case 18:
    case 22:
    case 23:
      return {8, false};  // unsigned, size_t, address
    default:
      return {};
  }
}

int32_t ToInt32(int64_t value) {
  return value >= INT32_MIN && value <= INT32_MAX ? static_cast<int32_t>(value) : -1;
}

}  // namespace

std::string PayloadBytes(std::string_view cell) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  // Hex text is exactly twice the header or more, all hex digits; a binary header (small ids,
  // zero bytes) never is.
  bool is_hex = cell.size() >= 2 * kHeaderBytes && cell.size() % 2 == 0;
  for (size_t i = 0; is_hex && i < cell.size(); ++i) is_hex = hex(cell[i]) >= 0;
  if (!is_hex) return std::string(cell);
  std::string bytes(cell.size() / 2, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<char>(hex(cell[2 * i]) * 16 + hex(cell[2 * i + 1]));
  }
  return bytes;
}

absl::Status PayloadSchemas::Load(const Database& database) {
  if (!database.HasTable("NVTX_PAYLOAD_SCHEMA_ENTRIES")) return absl::OkStatus();
  BUBBLESCOPE_ASSIGN_OR_RETURN(
      Statement rows,
      database.Prepare(absl::StrCat("SELECT domainId, schemaId, idx, type, name, offset FROM ",
                                    database.Table("NVTX_PAYLOAD_SCHEMA_ENTRIES"))));
  // (domain, schema) -> the entries seen, by index; duplicates (one registration per process)
  // are dropped.
  absl::flat_hash_map<std::pair<uint64_t, uint64_t>, absl::flat_hash_map<int64_t, PayloadField>>
      entries;
  while (rows.Step()) {
    const std::pair<uint64_t, uint64_t> key{static_cast<uint64_t>(rows.Int(0)),
                                            static_cast<uint64_t>(rows.Int(1))};
    entries[key].try_emplace(rows.Int(2),
                             PayloadField{std::string(rows.Text(4)), rows.Int(3), rows.Int(5)});
  }
  BUBBLESCOPE_RETURN_IF_ERROR(rows.status());
  for (auto& [key, fields] : entries) {
    // By index: the fields in the order the schema lists them.
    std::vector<std::pair<int64_t, PayloadField>> ordered(fields.begin(), fields.end());
    std::sort(ordered.begin(), ordered.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<PayloadField>& schema = schemas_[key];
    for (auto& [index, field] : ordered) schema.push_back(std::move(field));
  }
  return absl::OkStatus();
}

std::optional<NcclPayload> PayloadSchemas::Decode(std::string_view cell) const {
  const std::string blob = PayloadBytes(cell);
  if (blob.size() < kHeaderBytes) return std::nullopt;
  const uint64_t domain = LittleEndian(blob, 0, 8);
  const uint64_t schema_id = LittleEndian(blob, 8, 8);
  const uint64_t size = LittleEndian(blob, 16, 8);
  const uint64_t offset = LittleEndian(blob, 24, 8);
  if (offset < kHeaderBytes || offset > blob.size() || size > blob.size() - offset) {
    return std::nullopt;
  }
  auto schema = schemas_.find({domain, schema_id});
  if (schema == schemas_.end()) return std::nullopt;
  const std::string_view payload = std::string_view(blob).substr(offset, size);
  NcclPayload decoded;
  for (const PayloadField& field : schema->second) {
    const IntegerType type = IntegerTypeOf(field.type);
    if (type.width == 0 || field.offset < 0 ||
        static_cast<uint64_t>(field.offset) + type.width > payload.size()) {
      continue;
    }
    uint64_t raw = LittleEndian(payload, static_cast<size_t>(field.offset), type.width);
    int64_t value = static_cast<int64_t>(raw);
    if (type.is_signed && type.width < 8 && (raw >> (8 * type.width - 1)) != 0) {
      value = static_cast<int64_t>(raw | (~uint64_t{0} << (8 * type.width)));
    }
    // NCCL's own field names (src/include/nvtx_payload_schemas.h).
    if (field.name == "NCCL communicator ID") {
      decoded.communicator = raw;
    } else if (field.name == "Message size [bytes]" || field.name == "Bytes") {
      if (value >= 0) decoded.bytes = value;
    } else if (field.name == "Peer rank") {
      decoded.peer = ToInt32(value);
    } else if (field.name == "No. of ranks") {
      decoded.ranks = ToInt32(value);
    } else if (field.name == "Rank") {
      decoded.rank = ToInt32(value);
    }
  }
  return decoded;
}

}  // namespace bubblescope::nsys

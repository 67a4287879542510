// Hash tables for data whose size the input decides (one entry per flow, launch, name, pid...).
//
// Abseil's flat_hash_map and flat_hash_set (the Debian build, 20220623) cannot fail cleanly: a
// growth or reserve whose allocation throws std::bad_alloc leaves the table with its new
// capacity and its old storage, and its destructor then frees what it does not own ("double free
// or corruption", an abort instead of the one-line out-of-memory error). std::unordered_map and
// std::unordered_set give the strong guarantee on a throwing insert or rehash, so every table a
// reader or the rank index fills from a trace is one of these; Abseil's hash is kept as the
// hasher. Tables sized by the program itself (a handful of kinds, the flags) may stay Abseil's.
#pragma once

#include <unordered_map>
#include <unordered_set>

#include "absl/hash/hash.h"

namespace bubblescope {

template <typename Key, typename Value>
using UnwindingHashMap = std::unordered_map<Key, Value, absl::Hash<Key>>;

template <typename Key>
using UnwindingHashSet = std::unordered_set<Key, absl::Hash<Key>>;

}  // namespace bubblescope

#include "common/interval_set.h"

#include <algorithm>

namespace bubblescope {

IntervalSet IntervalSet::FromRanges(std::vector<TimeRange> ranges) {
  std::erase_if(ranges, [](const TimeRange& r) { return r.end <= r.start; });
  if (!std::is_sorted(ranges.begin(), ranges.end(),
                      [](const TimeRange& a, const TimeRange& b) { return a.start < b.start; })) {
    std::sort(ranges.begin(), ranges.end(),
              [](const TimeRange& a, const TimeRange& b) { return a.start < b.start; });
  }
  IntervalSet set;
  set.ranges_.reserve(ranges.size());
  for (const TimeRange& range : ranges) set.AppendSorted(range);
  set.ranges_.shrink_to_fit();
  return set;
}

void IntervalSet::AppendSorted(TimeRange range) {
  if (!ranges_.empty() && range.start <= ranges_.back().end) {
    ranges_.back().end = std::max(ranges_.back().end, range.end);
    return;
  }
  ranges_.push_back(range);
}

TimeNs IntervalSet::Length() const {
  TimeNs total = 0;
  for (const TimeRange& range : ranges_) total += range.length();
  return total;
}

bool IntervalSet::Contains(TimeNs point) const {
  // The last range starting at or before `point` is the only one that can hold it.
  auto after = std::upper_bound(ranges_.begin(), ranges_.end(), point,
                                [](TimeNs p, const TimeRange& r) { return p < r.start; });
  if (after == ranges_.begin()) return false;
  return point < std::prev(after)->end;
}

IntervalSet IntervalSet::Union(const IntervalSet& other) const {
  IntervalSet result;
  result.ranges_.reserve(ranges_.size() + other.ranges_.size());
  size_t i = 0;
  size_t j = 0;
  while (i < ranges_.size() || j < other.ranges_.size()) {
    bool take_mine = j == other.ranges_.size() ||
                     (i < ranges_.size() && ranges_[i].start <= other.ranges_[j].start);
    result.AppendSorted(take_mine ? ranges_[i++] : other.ranges_[j++]);
  }
  return result;
}

IntervalSet IntervalSet::Intersect(const IntervalSet& other) const {
  IntervalSet result;
  size_t i = 0;
  size_t j = 0;
  while (i < ranges_.size() && j < other.ranges_.size()) {
    const TimeRange& a = ranges_[i];
    const TimeRange& b = other.ranges_[j];
    TimeNs start = std::max(a.start, b.start);
    TimeNs end = std::min(a.end, b.end);
    // Pieces of two disjoint sorted sets never touch each other, so a plain push_back is exact.
    if (start < end) result.ranges_.push_back({start, end});
    if (a.end < b.end) {
      ++i;
    } else {
      ++j;
    }
  }
  return result;
}

TimeNs IntervalSet::IntersectionLength(const IntervalSet& other) const {
  TimeNs total = 0;
  size_t i = 0;
  size_t j = 0;
  while (i < ranges_.size() && j < other.ranges_.size()) {
    const TimeRange& a = ranges_[i];
    const TimeRange& b = other.ranges_[j];
    TimeNs start = std::max(a.start, b.start);
    TimeNs end = std::min(a.end, b.end);
    if (start < end) total += end - start;
    if (a.end < b.end) {
      ++i;
    } else {
      ++j;
    }
  }
  return total;
}

IntervalSet IntervalSet::Subtract(const IntervalSet& other) const {
  IntervalSet result;
  size_t j = 0;
  for (const TimeRange& a : ranges_) {
    TimeNs cursor = a.start;
    while (j < other.ranges_.size() && other.ranges_[j].end <= cursor) ++j;
    // Walk the holes `other` punches into `a`; a hole that reaches past `a` may also cut the
    // next range, so it is kept (not skipped) when the walk stops.
    size_t k = j;
    while (k < other.ranges_.size() && other.ranges_[k].start < a.end) {
      const TimeRange& hole = other.ranges_[k];
      if (hole.start > cursor) result.ranges_.push_back({cursor, hole.start});
      cursor = std::max(cursor, hole.end);
      if (hole.end >= a.end) break;
      ++k;
    }
    j = k;
    if (cursor < a.end) result.ranges_.push_back({cursor, a.end});
  }
  return result;
}

}  // namespace bubblescope

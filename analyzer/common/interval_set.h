// A set of time points stored as sorted, disjoint, non-empty half-open ranges [start, end).
//
// Every analysis that asks "how long was something busy" reduces to set algebra on time: the
// union of kernels on all streams, the part of a span covered by communication, the gaps left
// after removing compute. IntervalSet is the one mechanism for all of it, so overlap handling is
// written (and tested) once. All operations are linear merges over the sorted ranges.
#pragma once

#include <cstddef>
#include <vector>

#include "bubblescope/trace.h"

namespace bubblescope {

struct TimeRange {
  TimeNs start = 0;
  TimeNs end = 0;  // exclusive

  TimeNs length() const { return end - start; }
  friend bool operator==(const TimeRange&, const TimeRange&) = default;
};

class IntervalSet {
 public:
  IntervalSet() = default;

  // Normalises arbitrary ranges: sorts them, merges overlapping and touching ones, and drops
  // empty or inverted ones (end <= start), which cover no time.
  static IntervalSet FromRanges(std::vector<TimeRange> ranges);

  // The disjoint ranges in increasing order; consecutive ranges never touch.
  const std::vector<TimeRange>& ranges() const { return ranges_; }
  bool empty() const { return ranges_.empty(); }
  size_t size() const { return ranges_.size(); }

  // Total covered time.
  TimeNs Length() const;
  // First covered point and end of the last range; both 0 for an empty set.
  TimeNs Start() const { return ranges_.empty() ? 0 : ranges_.front().start; }
  TimeNs End() const { return ranges_.empty() ? 0 : ranges_.back().end; }
  bool Contains(TimeNs point) const;

  IntervalSet Union(const IntervalSet& other) const;
  IntervalSet Intersect(const IntervalSet& other) const;
  // Points of this set that are not in `other`.
  IntervalSet Subtract(const IntervalSet& other) const;
  // |this ∩ other| without materialising the intersection.
  TimeNs IntersectionLength(const IntervalSet& other) const;

  friend bool operator==(const IntervalSet&, const IntervalSet&) = default;

 private:
  // Appends `range` (which must not start before the last range does), merging when it overlaps
  // or touches the last one. The building block of every operation.
  void AppendSorted(TimeRange range);

  std::vector<TimeRange> ranges_;
};

}  // namespace bubblescope

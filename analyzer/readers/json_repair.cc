#include "readers/json_repair.h"

#include <vector>

#include "text/json_space.h"

namespace bubblescope::kineto {
namespace {

bool EndsScalar(char c) {
  return text::IsJsonSpace(c) || c == ',' || c == ':' || c == ']' || c == '}' || c == '[' ||
         c == '{' || c == '"';
}

class RepairScanner {
 public:
  explicit RepairScanner(std::string_view json) : json_(json) {}

  RepairPlan Run() {
    RepairPlan plan;
    size_t i = 0;
    for (; i < json_.size(); ++i) {
      const char c = json_[i];
      if (in_string_) {
        if (c == '\\') {
          ++i;
        } else if (c == '"') {
          in_string_ = false;
          if (string_is_key_) {
            trace_events_key_ = json_.substr(string_start_, i - string_start_) == "traceEvents";
          } else {
            ValueDone(i + 1);
          }
        }
        continue;
      }
      if (in_scalar_) {
        if (!EndsScalar(c)) continue;
        in_scalar_ = false;
        ValueDone(i);
      }
      if (!Structural(c, i)) return plan;  // mismatched brackets: not a truncation
    }
    if (!in_string_ && !in_scalar_ && stack_.empty()) return plan;  // complete document
    plan.ends_early = true;
    if (!has_cut_) return plan;
    plan.repairable = true;
    plan.keep_bytes = cut_;
    plan.closers = cut_closers_;
    plan.complete_events = cut_events_;
    size_t damage = cut_;
    while (damage < json_.size() && (text::IsJsonSpace(json_[damage]) || json_[damage] == ',')) {
      ++damage;
    }
    plan.damage_offset = damage;
    plan.only_missing_close = damage == json_.size() && stack_.size() == 1 && stack_[0] == '[' &&
                              !in_string_ && !in_scalar_;
    return plan;
  }

 private:
  bool InRootObject() const { return stack_.size() == 1 && stack_[0] == '{'; }

  // Handles a byte outside strings and scalars; false on a bracket that closes nothing.
  bool Structural(char c, size_t i) {
    switch (c) {
      case '"':
        in_string_ = true;
        string_start_ = i + 1;
        string_is_key_ = InRootObject() && key_position_;
        return true;
      case '{':
      case '[': {
        const bool opens_events =
            (stack_.empty() && c == '[') ||
            (c == '[' && InRootObject() && !key_position_ && trace_events_key_);
        stack_.push_back(c);
        if (opens_events) events_depth_ = stack_.size();
        if (c == '{' && stack_.size() == 1) key_position_ = true;
        return true;
      }
      case '}':
      case ']': {
        if (stack_.empty() || stack_.back() != (c == '}' ? '{' : '[')) return false;
        if (stack_.size() == events_depth_) events_depth_ = 0;  // the events array closed
        stack_.pop_back();
        ValueDone(i + 1);
        return true;
      }
      case ',':
        if (InRootObject()) key_position_ = true;
        return true;
      case ':':
        if (InRootObject()) key_position_ = false;
        return true;
      default:
        if (!text::IsJsonSpace(c)) in_scalar_ = true;
        return true;
    }
  }

  // A value ended at byte `end` (exclusive) inside the container on top of the stack.
  void ValueDone(size_t end) {
    if (events_depth_ != 0 && stack_.size() == events_depth_) {
      ++events_;
      SetCut(end, events_depth_ == 1 ? "]" : "]}");
    } else if (InRootObject()) {
      trace_events_key_ = false;
      SetCut(end, "}");
    }
  }

  void SetCut(size_t end, std::string_view closers) {
    has_cut_ = true;
    cut_ = end;
    cut_closers_ = closers;
    cut_events_ = events_;
  }

  std::string_view json_;
  std::vector<char> stack_;
  size_t events_depth_ = 0;  // stack depth of the events array while it is open, else 0
  bool in_string_ = false;
  bool string_is_key_ = false;
  size_t string_start_ = 0;
  bool in_scalar_ = false;
  bool key_position_ = false;      // in the root object, the next string is a key
  bool trace_events_key_ = false;  // the last root-object key was "traceEvents"
  size_t events_ = 0;
  bool has_cut_ = false;
  size_t cut_ = 0;
  std::string_view cut_closers_;
  size_t cut_events_ = 0;
};

}  // namespace

RepairPlan PlanRepair(std::string_view json) { return RepairScanner(json).Run(); }

size_t FirstDocumentEnd(std::string_view json) {
  size_t i = 0;
  while (i < json.size() && text::IsJsonSpace(json[i])) ++i;
  if (i == json.size() || (json[i] != '{' && json[i] != '[')) return std::string_view::npos;
  std::vector<char> open;
  bool in_string = false;
  for (; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      open.push_back(c);
    } else if (c == '}' || c == ']') {
      if (open.back() != (c == '}' ? '{' : '[')) return std::string_view::npos;
      open.pop_back();
      if (open.empty()) return i + 1;
    }
  }
  return std::string_view::npos;
}

}  // namespace bubblescope::kineto

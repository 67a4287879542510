#include "writers/event_text.h"

#include "text/json_string.h"
#include "text/micros.h"

namespace bubblescope {

EventText::EventText(std::string* out, EventStyle style, TimeSpelling spelling, int64_t offset_ns)
    : out_(out), style_(style), spelling_(spelling), offset_ns_(offset_ns) {}

void EventText::Open() {
  if (style_ == EventStyle::kKinetoMultiLine) {
    out_->append(events_ == 0 ? "  {\n    " : ",\n  {\n    ");
  } else if (style_ == EventStyle::kOneLinePerEvent) {
    out_->append(events_ == 0 ? "{" : ",\n{");
  } else {
    out_->append(events_ == 0 ? "{" : ", {");
  }
  ++events_;
  members_ = 0;
  in_args_ = false;
}

void EventText::Close() { out_->append(style_ == EventStyle::kKinetoMultiLine ? "\n  }" : "}"); }

void EventText::OpenArgs() {
  Key("args", true);
  out_->push_back('{');
  in_args_ = true;
  members_ = 0;
}

void EventText::CloseArgs() {
  if (style_ == EventStyle::kKinetoMultiLine && members_ > 0) {
    out_->append("\n    }");
  } else {
    out_->push_back('}');
  }
  in_args_ = false;
  members_ = 1;  // the args member itself
}

void EventText::Key(std::string_view key, bool line_break) {
  if (style_ == EventStyle::kKinetoMultiLine) {
    if (in_args_) {
      // Kineto puts every arg on a line of its own.
      out_->append(members_ == 0 ? "\n      " : ",\n      ");
    } else if (members_ > 0) {
      out_->append(line_break ? ",\n    " : ", ");
    }
  } else if (members_ > 0) {
    out_->append(", ");
  }
  ++members_;
  text::AppendJsonString(key, out_);
  out_->append(": ");
}

void EventText::AppendMicros(int64_t ns) {
  if (spelling_ == TimeSpelling::kFixed3) {
    text::AppendMicrosFixed3(ns, out_);
  } else {
    text::AppendMicrosCompact(ns, out_);
  }
}

void EventText::Str(std::string_view key, std::string_view value) {
  Key(key, false);
  text::AppendJsonString(value, out_);
}

void EventText::Int(std::string_view key, int64_t value) {
  Key(key, false);
  text::AppendInt(value, out_);
}

void EventText::Time(std::string_view key, int64_t ns) {
  // Kineto starts the timing members on a new line.
  Key(key, key == "ts");
  AppendMicros(ns - offset_ns_);
}

void EventText::Duration(std::string_view key, int64_t ns) {
  Key(key, false);
  AppendMicros(ns);
}

void EventText::Raw(std::string_view key, std::string_view raw_json) {
  Key(key, false);
  out_->append(raw_json);
}

}  // namespace bubblescope

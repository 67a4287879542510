#include "chrome_json.h"

#include "text/json_string.h"
#include "text/micros.h"

namespace bubblescope::collector {

ChromeEvent::ChromeEvent(std::string* out, std::string_view ph, std::string_view cat,
                         std::string_view name)
    : out_(out) {
  out_->append(",\n{\"ph\":");
  text::AppendJsonString(ph, out_);
  if (!cat.empty()) {
    out_->append(",\"cat\":");
    text::AppendJsonString(cat, out_);
  }
  out_->append(",\"name\":");
  text::AppendJsonString(name, out_);
}

void ChromeEvent::Key(std::string_view key) {
  if (!in_args_ || !first_in_args_) out_->push_back(',');
  first_in_args_ = false;
  text::AppendJsonString(key, out_);
  out_->push_back(':');
}

ChromeEvent& ChromeEvent::Int(std::string_view key, int64_t value) {
  Key(key);
  text::AppendInt(value, out_);
  return *this;
}

ChromeEvent& ChromeEvent::Micros(std::string_view key, int64_t ns) {
  Key(key);
  text::AppendMicrosFixed3(ns, out_);
  return *this;
}

ChromeEvent& ChromeEvent::Text(std::string_view key, std::string_view value) {
  Key(key);
  text::AppendJsonString(value, out_);
  return *this;
}

ChromeEvent& ChromeEvent::Raw(std::string_view key, std::string_view json) {
  Key(key);
  out_->append(json);
  return *this;
}

ChromeEvent& ChromeEvent::Args() {
  if (in_args_) return *this;
  out_->append(",\"args\":{");
  in_args_ = true;
  first_in_args_ = true;
  return *this;
}

void ChromeEvent::Finish() {
  if (in_args_) out_->push_back('}');
  out_->push_back('}');
}

}  // namespace bubblescope::collector

// Small builders for Chrome-trace JSON text: escaped strings and exact microsecond times. The
// collector writes events by hand (no JSON library in a library injected into other processes).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace bubblescope::collector {

// Appends `text` as a JSON string literal (quotes included). Control characters are escaped;
// bytes of invalid UTF-8 become U+FFFD, so a kernel name can never make the file unreadable.
void AppendJsonString(std::string_view text, std::string* out);

// Appends nanoseconds as microseconds with exactly three decimals ("1234.567"), so the reader gets
// the nanoseconds back exactly.
void AppendMicros(int64_t ns, std::string* out);

// One event under construction: `,\n{"ph":..,"cat":..,"name":..` then fields, then args. Every
// event after the file's first starts with its separator, so a file cut after any complete event
// is the array form without its closing bracket, which the reader accepts.
class EventText {
 public:
  // Starts an event; `cat` may be empty for none. ph and name come first, as the reader wants
  // them before args for the process-metadata event.
  EventText(std::string* out, std::string_view ph, std::string_view cat, std::string_view name);

  EventText& Int(std::string_view key, int64_t value);
  EventText& Micros(std::string_view key, int64_t ns);
  EventText& Text(std::string_view key, std::string_view value);
  // A field whose value is already JSON text.
  EventText& Raw(std::string_view key, std::string_view json);
  // Opens "args":{ (at most once); later fields go inside it.
  EventText& Args();
  // Closes args (when open) and the event.
  void Finish();

 private:
  void Key(std::string_view key);

  std::string* out_;
  bool in_args_ = false;
  bool first_in_args_ = false;
};

}  // namespace bubblescope::collector

// The collector's Chrome-trace event builder. It writes events by hand (no JSON library in a
// library injected into other processes); strings and times go through the analyzer's own text
// helpers (text/json_string.h, text/micros.h), so the collector and the Kineto writer escape
// names and spell nanoseconds the same way.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace bubblescope::collector {

// One event under construction: `,\n{"ph":..,"cat":..,"name":..` then fields, then args. Every
// event after the file's first starts with its separator, so a file cut after any complete event
// is the array form without its closing bracket, which the reader accepts.
class ChromeEvent {
 public:
  // Starts an event; `cat` may be empty for none. ph and name come first, as the reader wants
  // them before args for the process-metadata event.
  ChromeEvent(std::string* out, std::string_view ph, std::string_view cat, std::string_view name);

  ChromeEvent& Int(std::string_view key, int64_t value);
  // Nanoseconds as microseconds with exactly three decimals, so the reader gets them back exactly.
  ChromeEvent& Micros(std::string_view key, int64_t ns);
  ChromeEvent& Text(std::string_view key, std::string_view value);
  // A field whose value is already JSON text.
  ChromeEvent& Raw(std::string_view key, std::string_view json);
  // Opens "args":{ (at most once); later fields go inside it.
  ChromeEvent& Args();
  // Closes args (when open) and the event.
  void Finish();

 private:
  void Key(std::string_view key);

  std::string* out_;
  bool in_args_ = false;
  bool first_in_args_ = false;
};

}  // namespace bubblescope::collector

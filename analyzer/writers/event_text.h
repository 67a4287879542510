// Builds the text of one trace event (a flat JSON object with an optional "args" object) in either
// of the two spellings real files use: Kineto's own multi-line layout, or the one-line layout of
// files that went through Python's json.dump.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace bubblescope {

enum class EventStyle {
  kKinetoMultiLine,  // "  {\n    \"ph\": \"X\", ...,\n    \"ts\": ...,\n    \"args\": {\n      ..."
  kPythonOneLine,    // "{\"ph\": \"X\", \"cat\": ..., \"args\": {...}}"
  // The one-line spelling with every event on a line of its own (",\n" between events), as
  // bubblescope's collector appends them: a file cut between two writes ends after a whole event.
  kOneLinePerEvent,
};

// How timestamps and durations are spelled.
enum class TimeSpelling {
  kFixed3,   // µs with exactly three decimals
  kCompact,  // µs, integer when the ns part is zero, else three decimals
};

class EventText {
 public:
  EventText(std::string* out, EventStyle style, TimeSpelling spelling, int64_t offset_ns);

  // Starts an event (writing the separator after the previous one) / closes it.
  void Open();
  void Close();
  // "args" object of the current event.
  void OpenArgs();
  void CloseArgs();

  void Str(std::string_view key, std::string_view value);
  void Int(std::string_view key, int64_t value);
  // A timestamp in ns on the rank's clock, written relative to the offset given at construction.
  void Time(std::string_view key, int64_t ns);
  // A duration in ns.
  void Duration(std::string_view key, int64_t ns);
  // `raw_json` is written verbatim (arrays, floats).
  void Raw(std::string_view key, std::string_view raw_json);

  bool wrote_any_event() const { return events_ > 0; }

 private:
  void Key(std::string_view key, bool line_break);
  void AppendMicros(int64_t ns);

  std::string* out_;
  EventStyle style_;
  TimeSpelling spelling_;
  int64_t offset_ns_;
  int64_t events_ = 0;
  int members_ = 0;  // members written in the innermost open object
  bool in_args_ = false;
};

}  // namespace bubblescope

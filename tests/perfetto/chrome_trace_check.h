// Test helpers for written Chrome traces: the events as raw member text (walked with simdjson
// directly, not with the code under test), and the Chrome trace format's rules checked on them.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "readers/json_number.h"
#include "simdjson.h"

namespace bubblescope::testing {

// One event: member name -> the member's JSON text exactly as written.
using EventMembers = std::map<std::string, std::string>;

struct ChromeDocument {
  std::string merged_layout;  // the "bubblescope_merged" member's text; empty when absent
  std::string base_time;      // "baseTimeNanoseconds" as written; empty when absent
  std::vector<EventMembers> events;
};

inline std::string TrimmedText(std::string_view text) {
  const size_t end = text.find_last_not_of(" \t\n\r");
  return std::string(text.substr(0, end == std::string_view::npos ? 0 : end + 1));
}

// Parses a whole trace document (object or bare array form); a failure is a test failure.
inline ChromeDocument ParseChromeDocument(const std::string& json) {
  ChromeDocument document;
  simdjson::ondemand::parser parser;
  const simdjson::padded_string padded(json);
  simdjson::ondemand::document doc;
  EXPECT_EQ(parser.iterate(padded).get(doc), simdjson::SUCCESS);
  auto text_of = [](simdjson::ondemand::value& value) {
    std::string_view token = value.raw_json_token();
    if (!token.empty() && token[0] == '{') {
      simdjson::ondemand::object object;
      EXPECT_EQ(value.get_object().get(object), simdjson::SUCCESS);
      EXPECT_EQ(object.raw_json().get(token), simdjson::SUCCESS);
    } else if (!token.empty() && token[0] == '[') {
      simdjson::ondemand::array array;
      EXPECT_EQ(value.get_array().get(array), simdjson::SUCCESS);
      EXPECT_EQ(array.raw_json().get(token), simdjson::SUCCESS);
    }
    return TrimmedText(token);
  };
  auto read_events = [&](simdjson::ondemand::array& events) {
    for (auto element : events) {
      simdjson::ondemand::object object;
      EXPECT_EQ(element.get_object().get(object), simdjson::SUCCESS);
      EventMembers members;
      for (auto member : object) {
        std::string_view member_key;
        EXPECT_EQ(member.unescaped_key().get(member_key), simdjson::SUCCESS);
        const std::string member_name(member_key);
        simdjson::ondemand::value member_value;
        EXPECT_EQ(member.value().get(member_value), simdjson::SUCCESS);
        members[member_name] = text_of(member_value);
      }
      document.events.push_back(std::move(members));
    }
  };
  if (json.find_first_not_of(" \t\n\r") != std::string::npos &&
      json[json.find_first_not_of(" \t\n\r")] == '[') {  // the bare array form
    simdjson::ondemand::array events;
    EXPECT_EQ(doc.get_array().get(events), simdjson::SUCCESS);
    read_events(events);
    return document;
  }
  simdjson::ondemand::object root;
  EXPECT_EQ(doc.get_object().get(root), simdjson::SUCCESS);
  for (auto field : root) {
    std::string_view key;
    EXPECT_EQ(field.unescaped_key().get(key), simdjson::SUCCESS);
    const std::string name(key);
    simdjson::ondemand::value value;
    EXPECT_EQ(field.value().get(value), simdjson::SUCCESS);
    if (name == "bubblescope_merged") {
      document.merged_layout = text_of(value);
    } else if (name == "baseTimeNanoseconds") {
      document.base_time = text_of(value);
    } else if (name == "traceEvents") {
      simdjson::ondemand::array events;
      EXPECT_EQ(value.get_array().get(events), simdjson::SUCCESS);
      read_events(events);
    }
  }
  return document;
}

// A JSON number as ns (µs with up to 3 decimals); false if it is not one.
inline bool MicrosText(const std::string& text, int64_t* ns) {
  return kineto::ParseScaledDecimal(text, 3, ns) == kineto::NumberStatus::kOk;
}

inline std::string Unquoted(const std::string& text) {
  return text.size() >= 2 && text.front() == '"' ? text.substr(1, text.size() - 2) : text;
}

// The Chrome trace format's rules: every event has "ph", a numeric "ts" (metadata "M" events
// aside), "pid" and "tid"; "X" events a "dur" >= 0; every pid an event uses is named by a
// process_name metadata event and every (pid, tid) by a thread_name one; B and E events balance
// on each thread.
inline void ExpectChromeTraceRules(const ChromeDocument& document) {
  std::set<std::string> named_processes;
  std::set<std::pair<std::string, std::string>> named_threads;
  std::set<std::pair<std::string, std::string>> used_threads;
  std::map<std::pair<std::string, std::string>, int64_t> open_slices;
  for (size_t i = 0; i < document.events.size(); ++i) {
    const EventMembers& event = document.events[i];
    SCOPED_TRACE("event " + std::to_string(i));
    ASSERT_TRUE(event.contains("ph"));
    ASSERT_TRUE(event.contains("pid"));
    ASSERT_TRUE(event.contains("tid"));
    const std::string phase = Unquoted(event.at("ph"));
    const std::pair<std::string, std::string> thread{event.at("pid"), event.at("tid")};
    if (phase == "M") {
      const std::string name = event.contains("name") ? Unquoted(event.at("name")) : "";
      if (name == "process_name") named_processes.insert(thread.first);
      if (name == "thread_name") named_threads.insert(thread);
      continue;
    }
    int64_t ts = 0;
    ASSERT_TRUE(event.contains("ts"));
    EXPECT_TRUE(MicrosText(event.at("ts"), &ts)) << event.at("ts");
    used_threads.insert(thread);
    if (phase == "X") {
      int64_t dur = -1;
      ASSERT_TRUE(event.contains("dur"));
      EXPECT_TRUE(MicrosText(event.at("dur"), &dur)) << event.at("dur");
      EXPECT_GE(dur, 0);
    } else if (phase == "B") {
      ++open_slices[thread];
    } else if (phase == "E") {
      EXPECT_GT(open_slices[thread]--, 0) << "E without B";
    }
  }
  for (const auto& [thread, open] : open_slices) EXPECT_EQ(open, 0) << "B without E";
  for (const auto& thread : used_threads) {
    EXPECT_TRUE(named_processes.contains(thread.first)) << "pid " << thread.first;
    EXPECT_TRUE(named_threads.contains(thread))
        << "pid " << thread.first << " tid " << thread.second;
  }
}

}  // namespace bubblescope::testing

#include "support/process_state.h"

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace bubblescope::testing {
namespace {

using Clock = std::chrono::steady_clock;

std::string Contents(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

bool ProcessEnded(pid_t pid) {
  if (kill(pid, 0) != 0) return true;
  // The state is the first field after the command name, which is in parentheses and may
  // itself hold spaces and parentheses.
  const std::string stat = Contents("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z';
}

bool ProcessEndsWithin(pid_t pid, std::chrono::milliseconds limit) {
  const auto give_up = Clock::now() + limit;
  while (!ProcessEnded(pid)) {
    if (Clock::now() >= give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

pid_t PidWrittenTo(const std::string& path, std::chrono::milliseconds limit) {
  const auto give_up = Clock::now() + limit;
  while (Clock::now() < give_up) {
    const std::string text = Contents(path);
    if (!text.empty() && text.back() == '\n') return static_cast<pid_t>(std::stol(text));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return 0;
}

}  // namespace bubblescope::testing

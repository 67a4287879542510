// The `bubblescope` executable: the command line (cli/command_line.h) on this process's
// arguments and streams.
#include <iostream>
#include <string>
#include <vector>

#include "cli/command_line.h"

int main(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  return bubblescope::RunCommandLine(args, BUBBLESCOPE_VERSION, std::cout, std::cerr);
}

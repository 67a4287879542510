// The `bubblescope` command line as a function: parses one argument list, dispatches to the
// selected command, and turns parse errors into one message plus a hint and exit status 2. main()
// calls it with the process's streams; the Python module (python/) with streams of its own, so
// that `bubblescope.whatif` and the others run exactly the verbs the shell runs.
#include "cli/command_line.h"

#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "cli/analyze_command.h"
#include "cli/command.h"
#include "cli/diff_command.h"
#include "cli/digest_command.h"
#include "cli/gate_command.h"
#include "cli/record_command.h"
#include "cli/simulate_command.h"
#include "cli/watch_command.h"
#include "cli/whatif_command.h"

namespace {

constexpr char kMainFooter[] = R"(
Run 'bubblescope COMMAND --help' for the options of one command.

Examples:
  bubblescope analyze traces/
  bubblescope analyze rank0.json.gz rank1.json.gz --format json -o summary.json
  bubblescope record -o traces/ -- torchrun --nproc-per-node 8 train.py
  bubblescope diff before.json after.json
  bubblescope gate --baseline baseline.json traces/ --max-bubble-increase 0.02
  bubblescope digest traces/ -o digests/ && bubblescope analyze digests/
  bubblescope watch --prometheus bubble.prom traces/     # a running job, iteration by iteration
)";

// The parse error's message and where to look for help; names the subcommand that was reached.
int ReportUsageError(const CLI::App& app, const CLI::ParseError& error, std::ostream& err) {
  std::string help_command = "bubblescope";
  for (const CLI::App* sub : app.get_subcommands()) help_command += " " + sub->get_name();
  err << "bubblescope: " << error.what() << "\n"
      << "Run '" << help_command << " --help' for more information.\n";
  return bubblescope::kExitBadInput;
}

// A first argument that is neither an option nor a command: one line naming the command it is
// likely a typo of (or, when none is near, every command), and exit status 2. Checked before
// CLI11 parses, which would only say that a subcommand is required.
int ReportUnknownCommand(const CLI::App& app, std::string_view word, std::ostream& err) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    names.push_back(sub->get_name());
  }
  const std::string nearest = bubblescope::NearestName(word, names);
  err << "bubblescope: unknown command '" << word << "'";
  if (nearest.empty()) {
    err << " (the commands: ";
    for (size_t i = 0; i < names.size(); ++i) err << (i == 0 ? "" : ", ") << names[i];
    err << ")\n";
  } else {
    err << "; did you mean '" << nearest << "'?\n";
  }
  err << "Run 'bubblescope --help' for more information.\n";
  return bubblescope::kExitBadInput;
}

}  // namespace

namespace bubblescope {

int RunCommandLine(const std::vector<std::string>& args, const std::string& version,
                   std::ostream& out, std::ostream& err, bool* out_of_memory) {
  if (out_of_memory != nullptr) *out_of_memory = false;
  // CLI11 reads a C-style argument vector, the program's name first.
  std::vector<const char*> argv = {"bubblescope"};
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  const int argc = static_cast<int>(argv.size());

  CLI::App app(
      "bubblescope: measure pipeline bubbles in training traces: PyTorch profiler (Kineto) JSON "
      "(.json, .json.gz), Nsight Systems SQLite exports (.sqlite), bubblescope digests "
      "(.bsdigest) and the traces `bubblescope record` writes",
      "bubblescope");
  app.set_version_flag("--version", "bubblescope " + version);
  app.require_subcommand(1);
  app.footer(kMainFooter);

  std::vector<std::unique_ptr<Command>> commands;
  commands.push_back(std::make_unique<AnalyzeCommand>(version));
  commands.push_back(std::make_unique<WhatIfCommand>(version));
  commands.push_back(std::make_unique<DiffCommand>(version));
  commands.push_back(std::make_unique<GateCommand>(version));
  commands.push_back(std::make_unique<SimulateCommand>());
  commands.push_back(std::make_unique<RecordCommand>());
  commands.push_back(std::make_unique<DigestCommand>());
  commands.push_back(std::make_unique<WatchCommand>());
  for (const auto& command : commands) command->Register(app);

  const auto named = [&](const CLI::App* sub) { return sub->check_name(argv[1]); };
  if (argc > 1 && argv[1][0] != '-' && argv[1][0] != '\0' &&
      std::as_const(app).get_subcommands(named).empty()) {
    return ReportUnknownCommand(app, argv[1], err);
  }
  try {
    app.parse(argc, argv.data());
  } catch (const CLI::ParseError& error) {
    // --help and --version arrive as "errors" with exit code 0; CLI11 prints those itself.
    if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
      return app.exit(error, out, err);
    }
    return ReportUsageError(app, error, err);
  }
  for (const auto& command : commands) {
    if (!command->Selected()) continue;
    // Readers say which file exhausted memory; past them (an analysis, a report being built),
    // running out is still one line and exit status 2, never an abort. Output files being
    // written are removed on the way out (common/output_file.h).
    try {
      return command->Run(out, err);
    } catch (const std::bad_alloc&) {
      const std::string_view advice = command->OutOfMemoryAdvice();
      err << "bubblescope: out of memory" << (advice.empty() ? "" : "; ") << advice << "\n";
      if (out_of_memory != nullptr) *out_of_memory = true;
      return kExitBadInput;
    }
  }
  return kExitBadInput;  // unreachable: require_subcommand(1) guarantees a command
}

}  // namespace bubblescope

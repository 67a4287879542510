#include "cli/digest_command.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <new>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "common/digest_format.h"
#include "common/out_of_memory.h"
#include "common/output_file.h"
#include "common/output_temp.h"
#include "common/status_macros.h"
#include "index/digest_reduction.h"
#include "loader/trace_loader.h"
#include "readers/digest_reader.h"
#include "record_process/record_outputs.h"
#include "text/one_line.h"
#include "writers/digest_writer.h"

namespace bubblescope {
namespace {

namespace fs = std::filesystem;
using text::OneLine;

constexpr char kDigestFooter[] = R"(
Each PATH is what `analyze` reads: trace files (*.json, *.json.gz), directories of them, or
digests. One digest per rank is written to DIR as rank<r>.bsdigest: the rank's model reduced to
what the analyses read (device ops, launches and communication scopes, annotations, steps,
memory, metadata, import counters), varint-coded and deflated: typically 50x or more smaller
than the trace's JSON. `bubblescope analyze DIR` then gives the same report as the traces
(the JSON report's pipelines section byte for byte); digests and traces can be mixed. Traces are
read one at a time per worker and reduced at once, so memory holds the reduced ranks, not the
job (docs/digest.md).

Examples:
  bubblescope digest traces/ -o digests/
  bubblescope digest node*/rank*.json.gz -o /shared/job42/digests --force
  bubblescope analyze digests/

Exit status: 0 written; 1 a digest could not be written; 2 usage error, unreadable input, or
digests already in DIR (use --force to replace them).
)";

// The *.bsdigest files already in `directory` (none when it does not exist).
std::vector<fs::path> DigestsIn(const fs::path& directory) {
  std::vector<fs::path> found;
  std::error_code error;
  for (fs::directory_iterator it(directory, error); !error && it != fs::directory_iterator();
       it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.ends_with(digest::kFileSuffix)) found.push_back(it->path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

// Whether the file at `path` starts with the digest magic (a file we would not remove
// otherwise).
bool HoldsDigest(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::string head(digest::kMagic.size(), '\0');
  file.read(head.data(), static_cast<std::streamsize>(head.size()));
  return file.gcount() == static_cast<std::streamsize>(head.size()) &&
         digest::LooksLikeDigest(head);
}

uint64_t FileSize(const std::string& path) {
  std::error_code error;
  const uintmax_t size = fs::file_size(path, error);
  return error ? 0 : static_cast<uint64_t>(size);
}

// The digests already in `directory` that are in the way of this job's `targets`: an error
// when one is there without --force, or when a file named as a digest is none. With --force,
// those of another job (removed once the new set is in place).
absl::StatusOr<std::vector<fs::path>> CheckRoom(const fs::path& directory,
                                                const std::vector<fs::path>& targets, bool force) {
  std::vector<fs::path> others;
  for (const fs::path& existing : DigestsIn(directory)) {
    const bool ours = std::find(targets.begin(), targets.end(), existing) != targets.end();
    if (!force) {
      return absl::AlreadyExistsError(absl::StrCat(
          existing.string(),
          ours ? " already exists" : " is another job's digest (analyze DIR would read both)",
          " (use --force to replace the digests in ", directory.string(), ")"));
    }
    if (ours) continue;  // replaced by the rename
    if (!HoldsDigest(existing)) {
      return absl::AlreadyExistsError(
          absl::StrCat(existing.string(), " is no digest; not removing it"));
    }
    others.push_back(existing);
  }
  return others;
}

// An input that is the output directory, or a file in it: the digests would land among the
// traces they come from, and `analyze DIR` would then read every rank twice. Compared as files
// (device and inode), so a symlink to the directory or another spelling of it is caught.
absl::Status CheckNotAnInputDirectory(const std::vector<std::string>& inputs,
                                      const std::string& directory) {
  std::error_code error;
  if (!fs::is_directory(directory, error)) return absl::OkStatus();  // made by this run
  for (const std::string& input : inputs) {
    const fs::path path(input);
    const bool is_directory = fs::is_directory(path, error);
    const fs::path holder = is_directory ? path : fs::absolute(path, error).parent_path();
    if (!fs::equivalent(holder, directory, error) || error) continue;
    return absl::InvalidArgumentError(absl::StrCat(
        "-o ", directory, ": ",
        is_directory ? absl::StrCat("it is the input directory ", input)
                     : absl::StrCat("it holds the input ", input),
        "; the digests would lie beside the traces and analyze would read both (name another "
        "directory)"));
  }
  return absl::OkStatus();
}

// Writes the set whole or not at all (docs/digest.md): every digest goes into a hidden
// directory inside `directory` first, which nothing that lists its files reads; only when all
// are written (and flushed) are they renamed into place, with the other job's digests removed,
// while SIGINT, SIGTERM and SIGHUP wait. A run interrupted or out of space before then leaves
// the directory as it was (the hidden directory goes with the next digest run, or now on an
// error).
absl::Status WriteDigestSet(const Trace& trace, const fs::path& directory,
                            const std::vector<fs::path>& targets,
                            const std::vector<fs::path>& replaced, std::vector<uint64_t>* sizes) {
  absl::StatusOr<std::string> staging = CreateTempDirectory(directory.string(), "digests");
  if (!staging.ok()) {
    return absl::UnavailableError(
        absl::StrCat("cannot write ", directory.string(), ": ", staging.status().message()));
  }
  auto give_up = [&staging](absl::Status status) {
    std::error_code ignored;
    fs::remove_all(*staging, ignored);
    return status;
  };
  OutputFileOptions options;
  for (const Rank& rank : trace.ranks) options.protected_files.push_back(rank.source_path);
  std::vector<fs::path> written;
  for (size_t r = 0; r < trace.ranks.size(); ++r) {
    const std::string bytes = digest::Encode(trace.ranks[r]);
    written.push_back(fs::path(*staging) / targets[r].filename());
    if (absl::Status status = WriteOutputFile(written.back().string(), bytes, options);
        !status.ok()) {
      // Named as the user named the target, not by its place in the hidden directory.
      return give_up(absl::Status(
          status.code(),
          absl::StrReplaceAll(status.message(), {{written.back().string(), targets[r].string()}})));
    }
    sizes->push_back(bytes.size());
  }
  const SignalsHeld held;
  for (const fs::path& other : replaced) {
    std::error_code error;
    if (!fs::remove(other, error) || error) {
      return give_up(absl::InternalError(absl::StrCat("cannot remove ", other.string(), ": ",
                                                      error ? error.message() : "not removed")));
    }
  }
  for (size_t r = 0; r < written.size(); ++r) {
    std::error_code error;
    fs::rename(written[r], targets[r], error);
    if (error) {
      return give_up(absl::UnavailableError(
          absl::StrCat("cannot write ", targets[r].string(), ": ", error.message())));
    }
  }
  std::error_code ignored;
  fs::remove(*staging, ignored);
  return absl::OkStatus();
}

// LoadTrace with each rank reduced (index/digest_reduction.h) by the worker that read it, as
// soon as it has: memory holds the files in flight and the reduced ranks, not the job.
// `not_reduced` counts the ranks the reduction kept whole.
absl::StatusOr<Trace> ReadReduced(const std::vector<std::string>& paths, const LoadOptions& load,
                                  std::atomic<int>* not_reduced) {
  BUBBLESCOPE_ASSIGN_OR_RETURN(TraceFileList list, ListTraceFiles(paths, load));
  const std::vector<TraceFile>& files = list.files;
  std::vector<FileRead> reads =
      ReadTraceFiles(files, load, [&files, &load, not_reduced](size_t index, FileRead& read) {
        if (!read.status.ok()) return;
        try {
          for (Rank& rank : read.ranks) {
            index::Reduction reduction = index::ReduceForDigest(rank);
            if (!reduction.reduced) not_reduced->fetch_add(1);
            rank = std::move(reduction.rank);
          }
        } catch (const std::bad_alloc&) {
          read.ranks.clear();
          read.status = OutOfMemoryReading(files[index].path, load.max_file_bytes);
        }
      });
  return AssembleTrace(list, std::move(reads), load);
}

}  // namespace

std::string DigestFileName(int32_t rank) {
  return absl::StrCat("rank", rank, std::string(digest::kFileSuffix));
}

int WriteDigests(const JobSource& source, const std::string& directory, bool force,
                 std::ostream& out, std::ostream& err) {
  if (absl::Status apart = CheckNotAnInputDirectory(source.paths, directory); !apart.ok()) {
    err << "bubblescope: " << MessageLine(apart) << "\n";
    return kExitBadInput;
  }
  std::atomic<int> not_reduced{0};
  JobSource reduced = source;
  reduced.load_trace = [&not_reduced](const std::vector<std::string>& paths,
                                      const LoadOptions& load) {
    return ReadReduced(paths, load, &not_reduced);
  };
  absl::StatusOr<Trace> trace = LoadShowingProgress(reduced, source.load, err);
  if (!trace.ok()) {
    PrintLoadError(trace.status(), err);
    return kExitBadInput;
  }
  NoteLoadProblems(*trace, /*strict=*/false, err);
  if (not_reduced.load() > 0) {
    err << "warning: " << not_reduced.load()
        << " ranks kept whole: reducing them changed what the analyses read (a bubblescope bug "
           "worth reporting; their digests are complete, only larger)\n";
  }

  std::error_code error;
  fs::create_directories(directory, error);
  if (error || !fs::is_directory(directory)) {
    err << "bubblescope: cannot create " << OneLine(directory) << ": "
        << (error ? error.message() : "not a directory") << "\n";
    return kExitFailure;
  }
  std::vector<fs::path> targets;
  for (const Rank& rank : trace->ranks)
    targets.push_back(fs::path(directory) / DigestFileName(rank.rank));
  absl::StatusOr<std::vector<fs::path>> replaced = CheckRoom(directory, targets, force);
  if (!replaced.ok()) {
    err << "bubblescope: " << MessageLine(replaced.status()) << "\n";
    return absl::IsAlreadyExists(replaced.status()) ? kExitBadInput : kExitFailure;
  }
  std::vector<uint64_t> sizes;
  if (absl::Status written = WriteDigestSet(*trace, directory, targets, *replaced, &sizes);
      !written.ok()) {
    err << "bubblescope: " << MessageLine(written) << "\n";
    return kExitFailure;
  }

  std::map<std::string, uint64_t> trace_bytes;  // by input file (a merged trace holds several)
  uint64_t digest_bytes = 0;
  for (size_t r = 0; r < trace->ranks.size(); ++r) {
    const Rank& rank = trace->ranks[r];
    trace_bytes.emplace(rank.source_path, FileSize(rank.source_path));
    digest_bytes += sizes[r];
    out << "  " << OneLine(targets[r].string()) << "  " << HumanBytes(sizes[r]) << "  from "
        << OneLine(rank.source_path) << "\n";
  }
  uint64_t input_bytes = 0;
  for (const auto& [path, size] : trace_bytes) input_bytes += size;
  out << trace->ranks.size() << (trace->ranks.size() == 1 ? " digest, " : " digests, ")
      << HumanBytes(digest_bytes) << ", from " << trace_bytes.size()
      << (trace_bytes.size() == 1 ? " file of " : " files of ") << HumanBytes(input_bytes);
  if (digest_bytes > 0) {
    out << absl::StrFormat(" (%.1fx smaller)",
                           static_cast<double>(input_bytes) / static_cast<double>(digest_bytes));
  }
  out << "\n";
  return kExitOk;
}

CLI::App* DigestCommand::Define(CLI::App& app) {
  CLI::App* command =
      app.add_subcommand("digest",
                         "Write each rank's trace as a digest: what the analyses read, 50x or more "
                         "smaller, which analyze reads to the same report");
  command->footer(kDigestFooter);
  DefineLoadInputs(command);
  command->add_option("-o,--output", directory_, "Directory for the digests (created)")
      ->type_name("DIR")
      ->required();
  command->add_flag("--force", force_,
                    "Replace the digests already in DIR (this job's names are rewritten, other "
                    "*.bsdigest files removed)");
  return command;
}

int DigestCommand::Run(std::ostream& out, std::ostream& err) {
  std::optional<JobSource> source = Source(err);
  if (!source.has_value()) return kExitBadInput;
  return WriteDigests(*source, directory_, force_, out, err);
}

}  // namespace bubblescope

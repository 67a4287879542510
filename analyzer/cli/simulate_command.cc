#include "cli/simulate_command.h"

#include <cstdint>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "synth/live_set.h"
#include "synth/synthetic_job.h"

namespace bubblescope {
namespace {

constexpr char kSimulateFooter[] = R"(
Writes DIR/rank<r>.pt.trace.json (or .json.gz with --gzip), one Kineto trace per rank as the
PyTorch profiler would have written it, and DIR/truth.json with the exact bubble figures of the
simulated job (schema bubblescope.truth/1, see docs/simulator.md). Times are microseconds with
up to three decimals (ns). Per-stage values (--fwd-us, --bwd-us, --wgrad-us, --weights-mb) are one
number for every stage or a comma list with one per stage.

With --live the job is written as it runs, for `bubblescope watch` to follow: an iteration at a
time, SECONDS apart (docs/simulator.md).

Examples:
  bubblescope simulate -o sim/ --schedule 1f1b --stages 4 --microbatches 8
  bubblescope simulate -o sim/ --schedule interleaved --virtual-stages 2 --fwd-us 1000,1000,1500,1000
  bubblescope simulate -o sim/ --slow-link 1:2:25 --jitter 0.02 --annotations pp-gpu --gzip
  bubblescope simulate -o live/ --iterations 20 --format array --live 0.5

Exit status: 0 written; 1 a file could not be written; 2 a bad option value, or DIR already
holds a simulated set (use --force to replace it).
)";

using Opts = sim::SimulateOptions;

// Whether --help shows a flag's default value (those without one are empty until given).
enum Shown : bool { kNoDefault = false, kShowDefault = true };

// One flag of `simulate` after -o: the option it fills and how --help shows it. The field's type
// says the kind: text (one value), a list (one value per occurrence) or a switch.
struct FlagSpec {
  const char* names;
  std::variant<std::string Opts::*, std::vector<std::string> Opts::*, bool Opts::*> field;
  const char* description;
  const char* value_name = nullptr;  // a switch has none
  Shown shown = kNoDefault;
};

// In the order --help lists them.
const FlagSpec kFlagSpecs[] = {
    {"--schedule", &Opts::schedule, "gpipe, 1f1b, interleaved, zb-h1 or fwd-only", "NAME",
     kShowDefault},
    {"-p,--stages", &Opts::stages, "Pipeline stages = ranks", "INT", kShowDefault},
    {"-m,--microbatches", &Opts::microbatches, "Microbatches per iteration", "INT", kShowDefault},
    {"--virtual-stages", &Opts::virtual_stages,
     "Model chunks per rank (interleaved, or gpipe: torch's ScheduleLoopedBFS)", "INT",
     kShowDefault},
    {"-k,--iterations", &Opts::iterations, "Profiler steps", "INT", kShowDefault},
    {"--fwd-us", &Opts::forward_us, "Forward time of one microbatch per stage", "US[,US...]",
     kShowDefault},
    {"--bwd-us", &Opts::backward_us, "Backward time (zb-h1: input gradient only)", "US[,US...]",
     kShowDefault},
    {"--wgrad-us", &Opts::weight_grad_us, "Weight-gradient time (zb-h1 only)", "US[,US...]",
     kNoDefault},
    {"--kernels-per-op", &Opts::kernels_per_op, "Kernels each op is split into", "INT",
     kShowDefault},
    {"--activation-mb", &Opts::activation_mb, "MiB sent per p2p message", "MB", kShowDefault},
    {"--link-gbps", &Opts::link_gbps, "Bandwidth of every link, Gbit/s (or inf)", "GBPS",
     kShowDefault},
    {"--link-latency-us", &Opts::link_latency_us, "Latency of every transfer", "US", kShowDefault},
    {"--slow-link", &Opts::slow_links, "Directed link SRC->DST at GBPS instead (repeatable)",
     "SRC:DST:GBPS", kNoDefault},
    {"--launch-gap-us", &Opts::launch_gap_us, "CPU time of one kernel launch", "US", kShowDefault},
    {"--optimizer-us", &Opts::optimizer_us, "Optimizer kernel per rank per iteration (0 = none)",
     "US", kShowDefault},
    {"--jitter", &Opts::jitter, "Relative kernel-time noise in [0, 1)", "FRACTION", kShowDefault},
    {"--seed", &Opts::seed, "Seed of the jitter", "INT", kShowDefault},
    {"--clock-offset-us", &Opts::clock_offsets_us,
     "Per-rank clock offsets written into the traces (one per rank)", "US,US...", kNoDefault},
    {"--ranks-per-host", &Opts::ranks_per_host,
     "Ranks per host, each trace naming its host (host_name) as Kineto does since 2026; ranks of "
     "one host share one clock offset (0: no host named)",
     "N", kShowDefault},
    {"--host-clocks", &Opts::host_clocks,
     "Each host's clock against the true one, one per host (needs --ranks-per-host): offset in us "
     "and drift in ppm",
     "US:PPM,...", kNoDefault},
    {"--no-host-names", &Opts::no_host_names,
     "Hosts keep their clocks, but no trace names its host (Kineto before 2026)"},
    {"--iteration-gap-us", &Opts::iteration_gap_us,
     "Idle time between iterations, so a few iterations span minutes", "US", kShowDefault},
    {"--transfer-spread", &Opts::transfer_spread,
     "Each transfer's time x (1 + u), u uniform in [-S, S] per message", "S", kShowDefault},
    {"--collective-tail-us", &Opts::collective_tail_us,
     "Work after the reduction: each member of the iteration-end all-reduce ends up to this much "
     "after the others",
     "US", kShowDefault},
    {"--no-group-descriptions", &Opts::no_group_descriptions,
     "Process groups without descriptions (torch before 2.4)"},
    {"--stage-to-rank", &Opts::stage_to_rank,
     "Rank running each stage, a permutation (default: stage s on rank s)", "R,R...", kNoDefault},
    {"--weights-mb", &Opts::weights_mb, "Device memory held by each stage's weights", "MB[,MB...]",
     kShowDefault},
    {"--stash-mb", &Opts::stash_mb, "Activations kept per in-flight microbatch per chunk, MiB",
     "MB", kShowDefault},
    {"--no-iteration-barrier", &Opts::no_iteration_barrier,
     "Do not end each iteration with an all-reduce over all ranks"},
    {"--tensor-parallel", &Opts::tensor_parallel,
     "Tensor-parallel ranks per stage (Megatron-Core's layout tp-cp-ep-dp-pp)", "N", kShowDefault},
    {"--context-parallel", &Opts::context_parallel,
     "Context-parallel ranks per stage: ring attention's KV exchanges in each op", "N",
     kShowDefault},
    {"--cp-exchange-us", &Opts::cp_exchange_us, "Time of one ring-attention KV exchange", "US",
     kShowDefault},
    {"--expert-parallel", &Opts::expert_parallel,
     "Expert-parallel ranks (divides context x data): MoE all-to-alls in each op", "N",
     kShowDefault},
    {"--ep-share", &Opts::ep_share,
     "Share of each op's last kernel in its dispatch and combine all-to-alls", "FRACTION",
     kShowDefault},
    {"--data-parallel", &Opts::data_parallel, "Data-parallel copies of the pipeline", "N",
     kShowDefault},
    {"--sequence-parallel", &Opts::sequence_parallel,
     "Tensor-parallel all-gather before and reduce-scatter after each kernel"},
    {"--tp-overlap", &Opts::tp_overlap,
     "Backward tensor-parallel all-reduces run beside the next kernel"},
    {"--tp-share", &Opts::tp_share, "Share of each kernel's time in its collective", "FRACTION",
     kShowDefault},
    {"--dp-sync-us", &Opts::dp_sync_us,
     "Gradient all-reduce over data x context ranks after the last backward", "US", kShowDefault},
    {"--dp-sync-coalesced", &Opts::dp_sync_coalesced,
     "Write the gradient sync as Megatron's distributed optimizer issues it: a coalesced "
     "reduce-scatter whose kernel carries no group (then a loss all-reduce that does, on the same "
     "stream)"},
    {"--annotations", &Opts::annotations,
     "none, pp-gpu (PP:<stage><F|B|W><mb> GPU ranges), pp-cpu (Forward <mb> CPU ranges), pp-short "
     "(PP:<F|B|W><mb> CPU ranges) or pp-mirrored (PP:<stage><F|B|W><mb> CPU ranges and their GPU "
     "copies, as Kineto writes record_function on GPU jobs)",
     "STYLE", kShowDefault},
    {"--p2p", &Opts::p2p,
     "per-op (one NCCL kernel per send and recv, inside its c10d op) or batched "
     "(batch_isend_irecv as Megatron-LM and torch.distributed.pipelining issue it: one SendRecv "
     "kernel per batch under nccl:coalesced, peers only on the record_param_comms ops before it)",
     "STYLE", kShowDefault},
    {"--launches", &Opts::launches,
     "one-thread (every launch from one CPU thread, kernels named after their phase) or torch "
     "(backward compute launched from the autograd engine's thread, kernels named like cuBLAS "
     "GEMMs, without the phase)",
     "STYLE", kShowDefault},
    {"--vendor", &Opts::vendor,
     "cuda or rocm (hipLaunchKernel / hipDeviceSynchronize with text stream handles, an MI250X "
     "device, hipBLASLt GEMM names under --launches torch)",
     "VENDOR", kShowDefault},
    {"--format", &Opts::format,
     "Trace layout: new (relative ts + baseTimeNanoseconds), old (absolute ts), array (bare event "
     "array), nsys (one Nsight Systems SQLite export per rank, rank<r>.sqlite)",
     "LAYOUT", kShowDefault},
    {"--no-nccl-args", &Opts::no_nccl_args,
     "Leave NCCL metadata (peer, bytes, group) out of communication kernels"},
    {"--gzip", &Opts::gzip, "Write rank<r>.pt.trace.json.gz"},
    {"--force", &Opts::force, "Replace an existing set in DIR (its rank files and truth.json)"},
    {"--live", &Opts::live,
     "Write the job as it runs, one iteration every SECONDS (0: without waiting): "
     "array grows rank<r>.pt.trace.json as bubblescope record's collector does; new and old write "
     "one <host>_<pid>.<time_ns>.pt.trace.json per rank per iteration as torch.profiler's "
     "tensorboard_trace_handler does; truth.json at the end",
     "SECONDS", kNoDefault},
};

}  // namespace

CLI::App* SimulateCommand::Define(CLI::App& app) {
  CLI::App* simulate = app.add_subcommand("simulate",
                                          "Simulate a pipeline-parallel training "
                                          "job and write its per-rank traces and "
                                          "its exact bubble figures (truth.json)");
  simulate->footer(kSimulateFooter);
  simulate
      ->add_option("-o,--output", options_.output_dir, "Directory to write (created if missing)")
      ->type_name("DIR")
      ->required();
  for (const FlagSpec& spec : kFlagSpecs) {
    CLI::Option* flag = std::visit(
        [&](auto field) -> CLI::Option* {
          auto& target = options_.*field;
          if constexpr (std::is_same_v<decltype(field), bool Opts::*>) {
            return simulate->add_flag(spec.names, target, spec.description);
          } else if constexpr (std::is_same_v<decltype(field), std::vector<std::string> Opts::*>) {
            // One value per occurrence, so a list never takes the next argument as its own.
            return simulate->add_option(spec.names, target, spec.description)
                ->allow_extra_args(false);
          } else {
            return simulate->add_option(spec.names, target, spec.description);
          }
        },
        spec.field);
    if (spec.value_name != nullptr) flag->type_name(spec.value_name);
    if (spec.shown == kShowDefault) flag->capture_default_str();
  }
  return simulate;
}

int SimulateCommand::Run(std::ostream& out, std::ostream& err) {
  absl::StatusOr<sim::SimulateSettings> settings = sim::ParseSimulateOptions(options_);
  if (!settings.ok()) {
    err << "bubblescope: simulate: " << MessageLine(settings.status()) << "\n";
    return kExitBadInput;
  }
  absl::StatusOr<sim::Simulation> simulation = sim::Simulate(settings->config);
  if (!simulation.ok()) {
    bool bad_config = simulation.status().code() == absl::StatusCode::kInvalidArgument;
    err << "bubblescope: simulate: " << (bad_config ? "" : "internal error: ")
        << MessageLine(simulation.status()) << "\n";
    return bad_config ? kExitBadInput : kExitFailure;
  }
  absl::StatusOr<std::vector<std::string>> written =
      settings->live_interval_ns.has_value()
          ? sim::WriteSimulationSetLive(
                settings->config, *simulation, options_.output_dir, settings->write,
                sim::LiveWriteOptions{.interval_ns = *settings->live_interval_ns})
          : sim::WriteSimulationSet(settings->config, *simulation, options_.output_dir,
                                    settings->write);
  if (!written.ok()) {
    err << "bubblescope: simulate: " << MessageLine(written.status()) << "\n";
    return written.status().code() == absl::StatusCode::kAlreadyExists ? kExitBadInput
                                                                       : kExitFailure;
  }
  const sim::Truth& truth = simulation->truth;
  if (settings->live_interval_ns.has_value()) {
    out << absl::StrFormat(
        "simulate: wrote %d iterations live, %g s apart: %d trace files\n", truth.iterations.size(),
        static_cast<double>(*settings->live_interval_ns) / 1e9, written->size() - 1);
  }
  out << absl::StrFormat(
      "simulate: wrote %d rank traces and %s to %s\n"
      "%s p=%d m=%d v=%d, %d iterations: bubble fraction "
      "%.4f (theoretical %.4f), iteration "
      "p50 %.3f ms\n",
      simulation->trace.ranks.size(), sim::kTruthFileName, options_.output_dir, truth.schedule,
      truth.stages, truth.microbatches, truth.virtual_stages, truth.iterations.size(),
      truth.bubble_fraction, truth.theoretical_bubble_fraction,
      static_cast<double>(truth.latency_p50_ns) / 1e6);
  // The figure a schedule's memory trade-off shows in, without opening truth.json.
  std::vector<std::string> peaks;
  for (const sim::RankMemoryTruth& memory : truth.memory) {
    peaks.push_back(absl::StrFormat("%.2f", static_cast<double>(memory.peak_allocated_bytes) /
                                                static_cast<double>(int64_t{1} << 30)));
  }
  out << "peak allocated memory by rank, GiB: " << absl::StrJoin(peaks, ", ") << "\n"
      << "(bubblescope whatif predicts other configurations of a measured job without writing "
         "traces)\n";
  out << std::flush;
  return out ? kExitOk : kExitFailure;
}

}  // namespace bubblescope

#include "cli/simulate_command.h"

#include <cstdint>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "simulator/simulator.h"

namespace bubblescope {
namespace {

constexpr char kSimulateFooter[] = R"(
Writes DIR/rank<r>.pt.trace.json (or .json.gz with --gzip), one Kineto trace per rank as the
PyTorch profiler would have written it, and DIR/truth.json with the exact bubble figures of the
simulated job (schema bubblescope.truth/1, see docs/simulator.md). Times are microseconds with
up to three decimals (ns). Per-stage values (--fwd-us, --bwd-us, --wgrad-us, --weights-mb) are one
number for every stage or a comma list with one per stage.

Examples:
  bubblescope simulate -o sim/ --schedule 1f1b --stages 4 --microbatches 8
  bubblescope simulate -o sim/ --schedule interleaved --virtual-stages 2 --fwd-us 1000,1000,1500,1000
  bubblescope simulate -o sim/ --slow-link 1:2:25 --jitter 0.02 --annotations pp-gpu --gzip

Exit status: 0 written; 1 a file could not be written; 2 a bad option value, or DIR already
holds a simulated set (use --force to replace it).
)";

}  // namespace

CLI::App* SimulateCommand::Define(CLI::App& app) {
  CLI::App* simulate = app.add_subcommand("simulate",
                                          "Simulate a pipeline-parallel training "
                                          "job and write its per-rank traces and "
                                          "its exact bubble figures (truth.json)");
  simulate->footer(kSimulateFooter);
  SimulateFlags& f = flags_;
  simulate->add_option("-o,--output", f.output_dir, "Directory to write (created if missing)")
      ->type_name("DIR")
      ->required();
  simulate->add_option("--schedule", f.schedule, "gpipe, 1f1b, interleaved, zb-h1 or fwd-only")
      ->type_name("NAME")
      ->capture_default_str();
  simulate->add_option("-p,--stages", f.stages, "Pipeline stages = ranks")
      ->type_name("INT")
      ->capture_default_str();
  simulate->add_option("-m,--microbatches", f.microbatches, "Microbatches per iteration")
      ->type_name("INT")
      ->capture_default_str();
  simulate
      ->add_option("--virtual-stages", f.virtual_stages,
                   "Model chunks per rank (interleaved, or gpipe: torch's ScheduleLoopedBFS)")
      ->type_name("INT")
      ->capture_default_str();
  simulate->add_option("-k,--iterations", f.iterations, "Profiler steps")
      ->type_name("INT")
      ->capture_default_str();
  simulate->add_option("--fwd-us", f.forward_us, "Forward time of one microbatch per stage")
      ->type_name("US[,US...]")
      ->capture_default_str();
  simulate->add_option("--bwd-us", f.backward_us, "Backward time (zb-h1: input gradient only)")
      ->type_name("US[,US...]")
      ->capture_default_str();
  simulate->add_option("--wgrad-us", f.weight_grad_us, "Weight-gradient time (zb-h1 only)")
      ->type_name("US[,US...]");
  simulate->add_option("--kernels-per-op", f.kernels_per_op, "Kernels each op is split into")
      ->type_name("INT")
      ->capture_default_str();
  simulate->add_option("--activation-mb", f.activation_mb, "MiB sent per p2p message")
      ->type_name("MB")
      ->capture_default_str();
  simulate->add_option("--link-gbps", f.link_gbps, "Bandwidth of every link, Gbit/s (or inf)")
      ->type_name("GBPS")
      ->capture_default_str();
  simulate->add_option("--link-latency-us", f.link_latency_us, "Latency of every transfer")
      ->type_name("US")
      ->capture_default_str();
  simulate
      ->add_option("--slow-link", f.slow_links,
                   "Directed link SRC->DST at GBPS instead (repeatable)")
      ->type_name("SRC:DST:GBPS")
      ->allow_extra_args(false);
  simulate->add_option("--launch-gap-us", f.launch_gap_us, "CPU time of one kernel launch")
      ->type_name("US")
      ->capture_default_str();
  simulate
      ->add_option("--optimizer-us", f.optimizer_us,
                   "Optimizer kernel per rank per iteration (0 = none)")
      ->type_name("US")
      ->capture_default_str();
  simulate->add_option("--jitter", f.jitter, "Relative kernel-time noise in [0, 1)")
      ->type_name("FRACTION")
      ->capture_default_str();
  simulate->add_option("--seed", f.seed, "Seed of the jitter")
      ->type_name("INT")
      ->capture_default_str();
  simulate
      ->add_option("--clock-offset-us", f.clock_offsets_us,
                   "Per-rank clock offsets written into the traces (one per rank)")
      ->type_name("US,US...");
  simulate
      ->add_option("--ranks-per-host", f.ranks_per_host,
                   "Ranks per host, each trace naming its host (host_name) as Kineto does since "
                   "2026; ranks of one host share one clock offset (0: no host named)")
      ->type_name("N")
      ->capture_default_str();
  simulate
      ->add_option("--host-clocks", f.host_clocks,
                   "Each host's clock against the true one, one per host (needs "
                   "--ranks-per-host): offset in us and drift in ppm")
      ->type_name("US:PPM,...");
  simulate->add_flag("--no-host-names", f.no_host_names,
                     "Hosts keep their clocks, but no trace names its host (Kineto before 2026)");
  simulate
      ->add_option("--iteration-gap-us", f.iteration_gap_us,
                   "Idle time between iterations, so a few iterations span minutes")
      ->type_name("US")
      ->capture_default_str();
  simulate
      ->add_option("--transfer-spread", f.transfer_spread,
                   "Each transfer's time x (1 + u), u uniform in [-S, S] per message")
      ->type_name("S")
      ->capture_default_str();
  simulate
      ->add_option("--collective-tail-us", f.collective_tail_us,
                   "Work after the reduction: each member of the iteration-end all-reduce ends "
                   "up to this much after the others")
      ->type_name("US")
      ->capture_default_str();
  simulate->add_flag("--no-group-descriptions", f.no_group_descriptions,
                     "Process groups without descriptions (torch before 2.4)");
  simulate
      ->add_option("--stage-to-rank", f.stage_to_rank,
                   "Rank running each stage, a permutation (default: stage s on rank s)")
      ->type_name("R,R...");
  simulate->add_option("--weights-mb", f.weights_mb, "Device memory held by each stage's weights")
      ->type_name("MB[,MB...]")
      ->capture_default_str();
  simulate
      ->add_option("--stash-mb", f.stash_mb,
                   "Activations kept per in-flight microbatch per chunk, MiB")
      ->type_name("MB")
      ->capture_default_str();
  simulate->add_flag("--no-iteration-barrier", f.no_iteration_barrier,
                     "Do not end each iteration with an all-reduce over all ranks");
  simulate
      ->add_option("--tensor-parallel", f.tensor_parallel,
                   "Tensor-parallel ranks per stage (Megatron-Core's layout tp-cp-ep-dp-pp)")
      ->type_name("N")
      ->capture_default_str();
  simulate
      ->add_option("--context-parallel", f.context_parallel,
                   "Context-parallel ranks per stage: ring attention's KV exchanges in each op")
      ->type_name("N")
      ->capture_default_str();
  simulate
      ->add_option("--cp-exchange-us", f.cp_exchange_us, "Time of one ring-attention KV exchange")
      ->type_name("US")
      ->capture_default_str();
  simulate
      ->add_option("--expert-parallel", f.expert_parallel,
                   "Expert-parallel ranks (divides context x data): MoE all-to-alls in each op")
      ->type_name("N")
      ->capture_default_str();
  simulate
      ->add_option("--ep-share", f.ep_share,
                   "Share of each op's last kernel in its dispatch and combine all-to-alls")
      ->type_name("FRACTION")
      ->capture_default_str();
  simulate->add_option("--data-parallel", f.data_parallel, "Data-parallel copies of the pipeline")
      ->type_name("N")
      ->capture_default_str();
  simulate->add_flag("--sequence-parallel", f.sequence_parallel,
                     "Tensor-parallel all-gather before and reduce-scatter after each kernel");
  simulate->add_flag("--tp-overlap", f.tp_overlap,
                     "Backward tensor-parallel all-reduces run beside the next kernel");
  simulate->add_option("--tp-share", f.tp_share, "Share of each kernel's time in its collective")
      ->type_name("FRACTION")
      ->capture_default_str();
  simulate
      ->add_option("--dp-sync-us", f.dp_sync_us,
                   "Gradient all-reduce over data x context ranks after the last backward")
      ->type_name("US")
      ->capture_default_str();
  simulate->add_flag("--dp-sync-coalesced", f.dp_sync_coalesced,
                     "Write the gradient sync as Megatron's distributed optimizer issues it: a "
                     "coalesced reduce-scatter whose kernel carries no group (then a loss "
                     "all-reduce that does, on the same stream)");
  simulate
      ->add_option("--annotations", f.annotations,
                   "none, pp-gpu (PP:<stage><F|B|W><mb> GPU ranges), pp-cpu "
                   "(Forward <mb> CPU ranges), pp-short (PP:<F|B|W><mb> CPU ranges) or "
                   "pp-mirrored (PP:<stage><F|B|W><mb> CPU ranges and their GPU copies, as "
                   "Kineto writes record_function on GPU jobs)")
      ->type_name("STYLE")
      ->capture_default_str();
  simulate
      ->add_option("--p2p", f.p2p,
                   "per-op (one NCCL kernel per send and recv, inside its c10d op) or batched "
                   "(batch_isend_irecv as Megatron-LM and torch.distributed.pipelining issue "
                   "it: one SendRecv kernel per batch under nccl:coalesced, peers only on the "
                   "record_param_comms ops before it)")
      ->type_name("STYLE")
      ->capture_default_str();
  simulate
      ->add_option("--launches", f.launches,
                   "one-thread (every launch from one CPU thread, kernels named after their "
                   "phase) or torch (backward compute launched from the autograd engine's "
                   "thread, kernels named like cuBLAS GEMMs, without the phase)")
      ->type_name("STYLE")
      ->capture_default_str();
  simulate
      ->add_option("--vendor", f.vendor,
                   "cuda or rocm (hipLaunchKernel / hipDeviceSynchronize with text stream "
                   "handles, an MI250X device, hipBLASLt GEMM names under --launches torch)")
      ->type_name("VENDOR")
      ->capture_default_str();
  simulate
      ->add_option("--format", f.format,
                   "Trace layout: new (relative ts + baseTimeNanoseconds), old "
                   "(absolute "
                   "ts), array (bare event array), nsys (one Nsight Systems SQLite export per "
                   "rank, rank<r>.sqlite)")
      ->type_name("LAYOUT")
      ->capture_default_str();
  simulate->add_flag("--no-nccl-args", f.no_nccl_args,
                     "Leave NCCL metadata (peer, bytes, group) out of communication kernels");
  simulate->add_flag("--gzip", f.gzip, "Write rank<r>.pt.trace.json.gz");
  simulate->add_flag("--force", f.force,
                     "Replace an existing set in DIR (its rank files and truth.json)");
  return simulate;
}

int SimulateCommand::Run(std::ostream& out, std::ostream& err) {
  absl::StatusOr<SimulateSettings> settings = ParseSimulateFlags(flags_);
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
      sim::WriteSimulationSet(settings->config, *simulation, flags_.output_dir, settings->write);
  if (!written.ok()) {
    err << "bubblescope: simulate: " << MessageLine(written.status()) << "\n";
    return written.status().code() == absl::StatusCode::kAlreadyExists ? kExitBadInput
                                                                       : kExitFailure;
  }
  const sim::Truth& truth = simulation->truth;
  out << absl::StrFormat(
      "simulate: wrote %d rank traces and %s to %s\n"
      "%s p=%d m=%d v=%d, %d iterations: bubble fraction "
      "%.4f (theoretical %.4f), iteration "
      "p50 %.3f ms\n",
      simulation->trace.ranks.size(), sim::kTruthFileName, flags_.output_dir, truth.schedule,
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

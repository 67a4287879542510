// bubblescope_pipeline_demo: a small pipeline-parallel CUDA/NCCL job to try the collector on
// (docs/record.md). It forks one process per stage (rank r on GPU r), each rank's forward and
// backward passes are a few kernels per microbatch, activations and gradients travel between
// neighbouring stages with ncclSend/ncclRecv, and each iteration ends with an all-reduce. The
// schedule is GPipe: all forwards, then all backwards. Each op is an NVTX range named as
// torch.distributed.pipelining names its actions ("PP:{stage}F{mb}", "PP:{stage}B{mb}") and each
// iteration a "ProfilerStep#{i}" range, so bubblescope finds p, m and the iterations.
//
//   bubblescope record -o traces/ -- bubblescope_pipeline_demo --ranks 2
//
// `--count-gpus` prints the number of CUDA devices and exits (the GPU test's probe).
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "demo_kernels.h"
#include "nccl.h"
#include "nvtx3/nvToolsExt.h"

namespace bubblescope::demo {
namespace {

struct DemoOptions {
  int ranks = 2;
  int microbatches = 8;
  int iterations = 3;
  int elements = 1 << 20;  // floats per activation message (4 MiB)
  int kernels_per_op = 3;
  int rounds = 2000;
};

absl::Status Cuda(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(what, ": ", cudaGetErrorString(error)));
}

// How many CUDA devices there are: every process's first CUDA call. Without a GPU the runtime
// answers cudaErrorNoDevice, or, on a machine with no NVIDIA driver at all,
// cudaErrorInsufficientDriver ("CUDA driver version is insufficient for CUDA runtime version"),
// which reads like a version mismatch; both are said as the missing GPU they most often mean.
absl::StatusOr<int> CountGpus() {
  int devices = 0;
  const cudaError_t error = cudaGetDeviceCount(&devices);
  if (error == cudaSuccess) return devices;
  if (error == cudaErrorNoDevice) {
    return absl::UnavailableError(
        absl::StrCat("no CUDA GPU found (cudaGetDeviceCount: ", cudaGetErrorString(error), ")"));
  }
  if (error == cudaErrorInsufficientDriver) {
    return absl::UnavailableError(absl::StrCat(
        "no CUDA GPU found (cudaGetDeviceCount: ", cudaGetErrorString(error),
        ": no NVIDIA driver is loaded, or it is older than the CUDA ", CUDART_VERSION / 1000, ".",
        CUDART_VERSION % 1000 / 10, " runtime this demo was built with)"));
  }
  return Cuda(error, "cudaGetDeviceCount");
}

absl::Status Nccl(ncclResult_t result, const char* what) {
  if (result == ncclSuccess) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(what, ": ", ncclGetErrorString(result)));
}

// An NVTX range for the lifetime of the object.
class Range {
 public:
  explicit Range(const std::string& name) { nvtxRangePushA(name.c_str()); }
  ~Range() { nvtxRangePop(); }
  Range(const Range&) = delete;
  Range& operator=(const Range&) = delete;
};

// One rank's device state: its stream, communicator and one activation and one gradient buffer
// per microbatch (GPipe keeps every microbatch's activations until its backward).
class Stage {
 public:
  Stage(const DemoOptions& options, int rank) : options_(options), rank_(rank) {}
  ~Stage() {
    for (float* buffer : buffers_) cudaFree(buffer);
    if (comm_ != nullptr) ncclCommDestroy(comm_);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  Stage(const Stage&) = delete;
  Stage& operator=(const Stage&) = delete;

  absl::Status Init(const ncclUniqueId& id) {
    absl::StatusOr<int> devices = CountGpus();
    if (!devices.ok()) return devices.status();
    if (*devices < options_.ranks) {
      return absl::FailedPreconditionError(
          absl::StrCat(options_.ranks, " ranks need ", options_.ranks, " GPUs; found ", *devices));
    }
    if (auto s = Cuda(cudaSetDevice(rank_), "cudaSetDevice"); !s.ok()) return s;
    if (auto s = Cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "stream");
        !s.ok()) {
      return s;
    }
    const size_t bytes = sizeof(float) * static_cast<size_t>(options_.elements);
    for (int i = 0; i < 2 * options_.microbatches + 1; ++i) {
      float* buffer = nullptr;
      if (auto s = Cuda(cudaMalloc(&buffer, bytes), "cudaMalloc"); !s.ok()) return s;
      buffers_.push_back(buffer);
      if (auto s = Cuda(cudaMemsetAsync(buffer, 0, bytes, stream_), "cudaMemset"); !s.ok()) {
        return s;
      }
    }
    return Nccl(ncclCommInitRank(&comm_, options_.ranks, id, rank_), "ncclCommInitRank");
  }

  absl::Status RunIteration(int iteration) {
    Range step(absl::StrCat("ProfilerStep#", iteration));
    for (int mb = 0; mb < options_.microbatches; ++mb) {
      if (auto s = Forward(mb); !s.ok()) return s;
    }
    for (int mb = 0; mb < options_.microbatches; ++mb) {
      if (auto s = Backward(mb); !s.ok()) return s;
    }
    // The gradient-norm all-reduce every rank ends an iteration with.
    float* norm = buffers_.back();
    if (auto s =
            Nccl(ncclAllReduce(norm, norm, 1, ncclFloat, ncclSum, comm_, stream_), "ncclAllReduce");
        !s.ok()) {
      return s;
    }
    return Cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }

 private:
  float* Activation(int mb) const { return buffers_[static_cast<size_t>(mb)]; }
  float* Gradient(int mb) const {
    return buffers_[static_cast<size_t>(options_.microbatches + mb)];
  }
  bool First() const { return rank_ == 0; }
  bool Last() const { return rank_ == options_.ranks - 1; }

  absl::Status Forward(int mb) {
    Range op(absl::StrCat("PP:", rank_, "F", mb));
    const size_t count = static_cast<size_t>(options_.elements);
    if (!First()) {
      if (auto s = Nccl(ncclRecv(Activation(mb), count, ncclFloat, rank_ - 1, comm_, stream_),
                        "ncclRecv");
          !s.ok()) {
        return s;
      }
    }
    if (auto s = Cuda(LaunchForwardLayers(Activation(mb), options_.elements,
                                          options_.kernels_per_op, options_.rounds, stream_),
                      "forward kernels");
        !s.ok()) {
      return s;
    }
    if (Last()) return absl::OkStatus();
    return Nccl(ncclSend(Activation(mb), count, ncclFloat, rank_ + 1, comm_, stream_), "ncclSend");
  }

  absl::Status Backward(int mb) {
    Range op(absl::StrCat("PP:", rank_, "B", mb));
    const size_t count = static_cast<size_t>(options_.elements);
    if (!Last()) {
      if (auto s =
              Nccl(ncclRecv(Gradient(mb), count, ncclFloat, rank_ + 1, comm_, stream_), "ncclRecv");
          !s.ok()) {
        return s;
      }
    }
    if (auto s = Cuda(LaunchBackwardLayers(Gradient(mb), options_.elements, options_.kernels_per_op,
                                           options_.rounds, stream_),
                      "backward kernels");
        !s.ok()) {
      return s;
    }
    if (First()) return absl::OkStatus();
    return Nccl(ncclSend(Gradient(mb), count, ncclFloat, rank_ - 1, comm_, stream_), "ncclSend");
  }

  const DemoOptions& options_;
  const int rank_;
  cudaStream_t stream_ = nullptr;
  ncclComm_t comm_ = nullptr;
  std::vector<float*> buffers_;  // activations, gradients, then the all-reduce scalar
};

// Rank 0 creates the NCCL id and writes it to every other rank's pipe; the others read it.
absl::Status ShareUniqueId(int rank, const std::vector<int>& write_fds, int read_fd,
                           ncclUniqueId* id) {
  if (rank == 0) {
    if (auto s = Nccl(ncclGetUniqueId(id), "ncclGetUniqueId"); !s.ok()) return s;
    for (int fd : write_fds) {
      if (write(fd, id, sizeof(*id)) != static_cast<ssize_t>(sizeof(*id))) {
        return absl::InternalError("cannot hand the NCCL id to the other ranks");
      }
    }
    return absl::OkStatus();
  }
  size_t got = 0;
  char* bytes = reinterpret_cast<char*>(id);
  while (got < sizeof(*id)) {
    ssize_t n = read(read_fd, bytes + got, sizeof(*id) - got);
    if (n <= 0) return absl::InternalError("rank 0 did not hand out the NCCL id");
    got += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

int RankMain(const DemoOptions& options, int rank, const std::vector<int>& write_fds, int read_fd) {
  // The launcher variables the collector names its trace file by.
  setenv("RANK", std::to_string(rank).c_str(), 1);
  setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
  setenv("WORLD_SIZE", std::to_string(options.ranks).c_str(), 1);
  setenv("LOCAL_WORLD_SIZE", std::to_string(options.ranks).c_str(), 1);
  ncclUniqueId id{};
  absl::Status status = ShareUniqueId(rank, write_fds, read_fd, &id);
  if (status.ok()) {
    Stage stage(options, rank);
    status = stage.Init(id);
    for (int i = 0; status.ok() && i < options.iterations; ++i) status = stage.RunIteration(i);
  }
  if (!status.ok()) {
    // One write, so the ranks' messages do not interleave.
    std::cerr << absl::StrCat("bubblescope_pipeline_demo: rank ", rank, ": ", status.message(),
                              "\n");
    return 1;
  }
  return 0;
}

// Forks the ranks (before anything in this process touches CUDA, which must not be initialised
// across a fork), waits for them, and stops the rest once one fails.
int RunJob(const DemoOptions& options) {
  std::vector<int> read_fds(static_cast<size_t>(options.ranks), -1);
  std::vector<int> write_fds;
  for (int rank = 1; rank < options.ranks; ++rank) {
    int fds[2];
    if (pipe(fds) != 0) {
      std::cerr << "bubblescope_pipeline_demo: pipe failed\n";
      return 1;
    }
    read_fds[static_cast<size_t>(rank)] = fds[0];
    write_fds.push_back(fds[1]);
  }
  std::vector<pid_t> children;
  for (int rank = 0; rank < options.ranks; ++rank) {
    pid_t pid = fork();
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGTERM);  // a killed job takes its ranks with it
      for (int r = 0; r < options.ranks; ++r) {
        if (r != rank && read_fds[static_cast<size_t>(r)] >= 0) {
          close(read_fds[static_cast<size_t>(r)]);
        }
      }
      if (rank != 0) {
        for (int fd : write_fds) close(fd);
      }
      // exit(), not _exit(): the collector writes its last records at exit.
      std::exit(RankMain(options, rank, rank == 0 ? write_fds : std::vector<int>{},
                         read_fds[static_cast<size_t>(rank)]));
    }
    if (pid < 0) {
      std::cerr << "bubblescope_pipeline_demo: fork failed\n";
      for (pid_t child : children) kill(child, SIGTERM);
      break;
    }
    children.push_back(pid);
  }
  for (int fd : read_fds) {
    if (fd >= 0) close(fd);
  }
  for (int fd : write_fds) close(fd);
  int failures = children.size() == static_cast<size_t>(options.ranks) ? 0 : 1;
  for (size_t left = children.size(); left > 0; --left) {
    int status = 0;
    pid_t done = wait(&status);
    if (done < 0) break;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
    if (failures++ == 0) {
      for (pid_t child : children) {
        if (child != done) kill(child, SIGTERM);
      }
    }
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace bubblescope::demo

int main(int argc, char** argv) {
  using bubblescope::demo::DemoOptions;
  DemoOptions options;
  bool count_gpus = false;
  CLI::App app(
      "A pipeline-parallel CUDA/NCCL job (GPipe, NCCL send/recv between stages) to try "
      "`bubblescope record` on; rank r runs on GPU r",
      "bubblescope_pipeline_demo");
  app.add_option("--ranks", options.ranks,
                 "Pipeline stages = processes = GPUs (1: one stage, no transfers; for one GPU)")
      ->check(CLI::Range(1, 8))
      ->capture_default_str();
  app.add_option("--microbatches", options.microbatches, "Microbatches per iteration")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--iterations", options.iterations, "Iterations")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--elements", options.elements, "Floats per activation message")
      ->check(CLI::Range(1, 1 << 26))
      ->capture_default_str();
  app.add_option("--kernels-per-op", options.kernels_per_op, "Kernels per forward or backward")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--rounds", options.rounds, "Arithmetic per element per kernel (kernel length)")
      ->check(CLI::Range(1, 1'000'000))
      ->capture_default_str();
  app.add_flag("--count-gpus", count_gpus, "Print the number of CUDA devices and exit");
  CLI11_PARSE(app, argc, argv);
  if (count_gpus) {
    // A probe: no GPU is the answer 0 (with the reason on standard error), not a failure.
    absl::StatusOr<int> devices = bubblescope::demo::CountGpus();
    if (!devices.ok()) {
      std::cerr << "bubblescope_pipeline_demo: " << devices.status().message() << "\n";
    }
    std::cout << devices.value_or(0) << "\n";
    return 0;
  }
  return bubblescope::demo::RunJob(options);
}

// The discrete-event engine of the pipeline schedule simulator.
//
// SEMANTICS (the contract every simulator-based test relies on)
//
// Resources. Each rank has one CPU thread, one compute stream, one FIFO stream per p2p direction
// and neighbour (send-to-next, recv-from-prev, send-to-prev, recv-from-next) and one collective
// stream for the iteration-end all-reduce. In a job of several chunks per rank (interleaved,
// gpipe with v > 1) the links wrap around: the last stage's "next" is stage 0 (forwards of the
// next chunk) and stage 0's "prev" is the last stage (backwards of the previous chunk). A stream
// runs one kernel at a time, in launch order.
//
// Programs (per stage s of p, m microbatches, v chunks; see program.h):
//   gpipe:       F0..F(m-1), then B0..B(m-1). With v > 1 chunks (torch's ScheduleLoopedBFS,
//                the looped placement: chunk c of stage s is virtual stage c*p + s): every
//                forward of chunk 0, then of chunk 1, ..., then the backwards of chunk v-1 down
//                to chunk 0, each chunk's from microbatch m-1 down to 0.
//   1f1b:        min(m, p-1-s) warm-up forwards, then F,B pairs until the forwards run out, then
//                the remaining B's.
//   interleaved: Megatron order. Virtual forward step k = 0..m*v-1 is chunk (k/p) % v of
//                microbatch (k/(p*v))*p + k%p; backward step k the same with chunk
//                v-1-((k/p) % v); min(m*v, 2(p-s-1) + (v-1)p) warm-up forwards, then 1F1B over
//                those sequences.
//   zb-h1:       the 1f1b order with B computing the input gradient only, and W(j) right after
//                B(j + s) (the later the stage, the more of its drain the deferred W's fill);
//                the W's without such a B at the end, in order.
//   fwd-only:    F0..F(m-1).
//
// Dependencies. F(c,j) on s needs F(c,j) on s-1 (stage 0, c>0: F(c-1,j) on the last stage).
// B(c,j) on s needs B(c,j) on s+1 (last stage, c<v-1: B(c+1,j) on stage 0); the very last virtual
// stage's B(j) needs its own F(j); W(c,j) needs B(c,j). A dependency between two ranks travels as
// a send kernel on the producer and a recv kernel on the consumer; one on the same rank is a plain
// wait on the producer's last kernel.
//
// CPU. Per iteration a rank's CPU thread launches, in program order, for each op: its recv (if
// its input is remote), its kernels_per_op compute kernels, its send (if its output goes to
// another rank); then the optimizer kernel (if optimizer_ns > 0 and the schedule trains), then
// the all-reduce (if iteration_barrier), then it synchronizes. Every launch is a back-to-back
// launch_gap_ns call. The CPU never waits for the device except in that final synchronize.
//
// Device timing. A compute kernel starts at max(its launch end, the end of the previous kernel on
// the compute stream, for an op's first kernel: its input's arrival). A p2p kernel starts at
// max(its launch end, the end of the previous kernel on its own stream, the end of the last
// compute-stream kernel launched before it); so a send starts when its producing op ends and a
// recv is posted when the compute stream reaches the op that needs it. Rendezvous: a send and its
// recv each run from their own start; once both have started the transfer takes
// latency + ceil(bytes*8/gbps) over the link src -> dst, and both end together. The recv's end is
// the input's arrival. Sends never block compute. The all-reduce starts like a p2p kernel (so it
// is posted once the rank's compute stream, optimizer included, is done) and is a rendezvous of
// every rank: all of them end together at (the latest start over all ranks) + latency +
// ceil(kBarrierBytes*8/gbps) over the default link. On the ranks that post early, that wait is
// drain in the truth (the kernel is communication, after the last compute).
//
// Batched p2p (P2pStyle::kBatched). Every transfer is queued by a c10d call on the CPU (one
// launch slot each) and runs inside one batch kernel on the rank's single p2p stream. As in
// Megatron-LM: in 1f1b (and gpipe, zb-h1, fwd-only) a send is batched with the receive the next
// op needs when both go to the same neighbour (send_forward_recv_backward /
// send_backward_recv_forward), every other transfer is a batch of its own; in interleaved, a
// steady-state step is a forward and the backward after it (after the warm-up forwards): the
// backward's receive is posted with the forward's, before the step, the forward's send waits
// for the backward, and one batch between two steps (or ops, outside the steady state) holds
// the sends of the one and the receives of the next (send_forward_backward_recv_forward_
// backward, send_forward_recv_forward, send_backward_recv_backward). The batch kernel is launched
// in the slot after its last c10d call and starts like a p2p kernel (its launch end, the previous
// batch's end, the last compute kernel launched before it); each transfer in it completes at
// max(both kernels' starts) + its transfer time, and the batch ends when its last transfer has
// completed. The next compute kernel (or the optimizer, or the all-reduce) waits for the batch to
// end, as Megatron waits on the batch's requests.
//
// Costs. An op of cost C (per chunk: C / v rounded down) is kernels_per_op kernels; kernel i gets
// C / k, plus 1 ns for the first C % k of them. With jitter > 0 every compute kernel (and the
// optimizer) costs round(cost * (1 + u)), u uniform in [-jitter, jitter] from a std::mt19937_64
// seeded with `seed`, drawn in a fixed order (iteration, then rank, then launch order), so the
// same config always gives the same output.
//
// Iterations. Iteration i of a rank starts when the CPU begins launching it (iteration 0 at
// start_time_ns on every rank) and ends (its "ProfilerStep#i") when both the CPU finished
// launching and every kernel of the rank's iteration finished (the synchronize that
// `loss.item()` performs); iteration i+1 begins right then. With iteration_barrier every kernel
// of iteration i on every rank ends by the all-reduce's common end (each send ends with a recv
// that some rank's compute waited for before posting its all-reduce), so iteration i+1 starts on
// each rank at or after the end of iteration i's window: windows never overlap, and with free
// links and no launch gap every iteration starts on all ranks at once. Without the barrier a
// rank that finishes early starts the next iteration (and posts its first recv) while later
// stages still run the previous one.
#pragma once

#include "absl/status/statusor.h"
#include "schedule_engine/config.h"
#include "schedule_engine/records.h"

namespace bubblescope::sim {

// Runs the job described by `config` (validated here) and returns what happened, on the true
// clock. An internal error means the schedule itself deadlocked (a bug in program.cc).
absl::StatusOr<Records> RunSchedule(const Config& config);

}  // namespace bubblescope::sim

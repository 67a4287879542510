// The direction of point-to-point kernels whose own record does not say it.
//
// NCCL runs a send and a receive with one kernel ("ncclDevKernel_SendRecv",
// "ncclKernel_SendRecv_RING_SIMPLE_..."), so a trace without NCCL's metadata args only says
// "sendrecv". The CPU side still does: PyTorch launches each p2p kernel inside the c10d::send /
// c10d::recv_ operator (and its "nccl:send" / "nccl:recv" range), so the innermost such scope
// around the kernel's launch gives its direction, and its peer when that scope recorded one.
#pragma once

#include "bubblescope/trace.h"

namespace bubblescope::kineto {

// Rewrites the CommInfo of every GPU communication kernel of kind sendrecv or unknown whose launch
// (matched by correlation id) lies inside a CPU send or recv scope on its thread. Needs the
// rank's intervals and annotations sorted by start, longer first.
void ResolveP2pDirections(Rank* rank);

}  // namespace bubblescope::kineto

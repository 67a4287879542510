// Renders the job summary (job::JobSummary): how many pipelines the p2p graph gave,
// the worst one and the spread of bubble fractions between them, ranks outside every pipeline,
// and, for a job without any pipeline, its collectives (docs/json-report.md, "job").
#pragma once

#include <cstdint>
#include <string>

#include "job/job.h"
#include "text/json_writer.h"

namespace bubblescope {

std::string JobText(const job::JobSummary& job);

// The report's second line when the job is incomplete (job::Result::Incomplete): how many of the
// declared ranks the trace holds and which are missing. Empty for a complete job.
std::string IncompleteJobText(const job::Result& result);

// Lines under the report's headline when the ranks' files disagree on what job they are
// (job::JobSummary::one_run): "NOT ONE RUN: ..." for each proof, "may not be one run: ..." for
// each weaker sign. Empty when they agree.
std::string OneRunText(const one_run::Result& one_run);

// The three lines a text report opens with, before any table, for the pipeline with the largest
// bubble: its headline figures; its costliest warning (the top cause the findings give) and
// what it costs per iteration; the next step to try for that kind. Empty without pipelines.
std::string DiagnosisText(const job::Result& result);

// The stage of `rank` as the report view places it (report_view::RankPlace::stage): -1 when the
// stage order is unknown or the pipeline is one rank whose annotations name no stage. For the
// per-rank table and its JSON, which read it a rank at a time.
int32_t StagePosition(const job::Pipeline& pipeline, int32_t rank);

// "INCOMPLETE: ..." for a pipeline exchanging p2p with ranks outside the trace; empty otherwise.
std::string IncompletePipelineText(const job::Pipeline& pipeline);

// Why a job has no pipeline, in words that agree with its collectives table: "no rank has
// point-to-point traffic", or where the table counts point-to-point kinds (a sendrecv whose
// direction is unknown, a send in no pipeline's role), that none of it is a send or receive
// between pipeline stages.
std::string NoPipelineReason(const job::JobSummary& job);

// The "job" member, written into the object `json` has open.
void WriteJobMember(const job::JobSummary& job, JsonWriter& json);

}  // namespace bubblescope

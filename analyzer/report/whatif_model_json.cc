#include "report/whatif_model_json.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace bubblescope {
void WriteWhatIfModelMembers(const job::Pipeline& pipeline, JsonWriter& json) {
  json.Key("whatif_model");
  if (!pipeline.model.has_value()) {
    json.Null();
    json.StringMember("whatif_model_problem", pipeline.model_problem);
    return;
  }
  const whatif::Model& model = *pipeline.model;
  json.BeginObject();
  json.StringMember("schedule", sim::ScheduleName(model.schedule));
  json.IntMember("p", model.p);
  json.IntMember("m", model.m);
  json.IntMember("v", model.v);
  json.BoolMember("separate_weight_grad", model.separate_weight_grad);
  json.BoolMember("multi_chunk_zero_bubble", model.multi_chunk_zero_bubble);
  json.BoolMember("batched_p2p", model.batched_p2p);
  json.IntMember("measured_iteration_ns", model.measured_iteration_ns);
  json.DoubleMember("measured_bubble_fraction", model.measured_bubble_fraction);
  json.Key("stages");
  json.BeginArray();
  for (const whatif::StageModel& stage : model.stages) {
    json.BeginObject();
    json.IntMember("rank", stage.rank);
    json.DoubleMember("forward_ns", stage.forward_ns);
    json.DoubleMember("backward_ns", stage.backward_ns);
    json.DoubleMember("weight_grad_ns", stage.weight_grad_ns);
    json.DoubleMember("recompute_ns", stage.recompute_ns);
    json.CountOrNullMember("memory_floor_bytes", stage.memory_floor_bytes);
    json.CountOrNullMember("memory_peak_bytes", stage.memory_peak_bytes);
    json.CountOrNullMember("memory_headroom_bytes", stage.memory_headroom_bytes);
    json.IntMember("layers", stage.layers);
    json.EndObject();
  }
  json.EndArray();
  json.Key("links");
  json.BeginArray();
  for (const whatif::LinkCost& link : model.links) {
    json.BeginObject();
    json.IntMember("src_stage", link.src_stage);
    json.IntMember("dst_stage", link.dst_stage);
    json.IntMember("transfer_ns", link.transfer_ns);
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
  json.Key("whatif_model_problem");
  json.Null();
}

ReportedPipeline ReportedPipelineOf(int32_t index, const job::Pipeline& pipeline) {
  ReportedPipeline out;
  out.pipeline = index;
  out.ranks = pipeline.crossrank.pipeline.stage_order();
  if (pipeline.model.has_value()) {
    out.model = *pipeline.model;
  } else {
    out.model = absl::FailedPreconditionError(
        pipeline.model_problem.empty() ? "the pipeline's shape is unknown" : pipeline.model_problem);
  }
  if (pipeline.rebalance.has_value() && pipeline.rebalance->result.ok() &&
      pipeline.rebalance->result->suggested) {
    out.rebalance_layers_after = pipeline.rebalance->result->layers_after;
  }
  return out;
}

std::vector<ReportedPipeline> ReportedPipelinesOf(const compare::RunFigures& run) {
  std::vector<ReportedPipeline> out;
  for (size_t i = 0; i < run.pipelines.size(); ++i) {
    const compare::PipelineFigures& pipeline = run.pipelines[i];
    ReportedPipeline reported;
    reported.pipeline = static_cast<int32_t>(i);
    reported.ranks = pipeline.ranks;
    if (pipeline.whatif_model.has_value()) {
      reported.model = *pipeline.whatif_model;
    } else {
      reported.model = absl::FailedPreconditionError(
          pipeline.whatif_model_problem.empty()
              ? "the report holds no what-if model for this pipeline"
              : pipeline.whatif_model_problem);
    }
    reported.rebalance_layers_after = pipeline.rebalance_layers_after;
    out.push_back(std::move(reported));
  }
  return out;
}

}  // namespace bubblescope

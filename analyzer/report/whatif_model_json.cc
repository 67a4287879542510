#include "report/whatif_model_json.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compare/report_schema.h"

namespace bubblescope {

namespace schema = compare::schema;

void WriteWhatIfModelMembers(const job::Pipeline& pipeline, JsonWriter& json) {
  if (schema::WriteField(schema::Member(schema::PipelineMember::kWhatIfModel), pipeline, json)) {
    const whatif::Model& model = *pipeline.model;
    json.BeginObject();
    for (const auto& field : schema::kWhatIfModelFields) {
      if (!schema::WriteField(field, model, json)) continue;
      if (field.nest == schema::Nest::kWhatIfStages) {
        schema::WriteObjects(schema::kWhatIfStageFields, model.stages, json);
      } else if (field.nest == schema::Nest::kWhatIfLinks) {
        schema::WriteObjects(schema::kWhatIfLinkFields, model.links, json);
      }
    }
    json.EndObject();
  }
  schema::WriteField(schema::Member(schema::PipelineMember::kWhatIfModelProblem), pipeline, json);
}

ReportedPipeline ReportedPipelineOf(int32_t index, const job::Pipeline& pipeline) {
  ReportedPipeline out;
  out.pipeline = index;
  out.ranks = pipeline.crossrank.pipeline.stage_order();
  if (pipeline.model.has_value()) {
    out.model = *pipeline.model;
  } else {
    out.model = absl::FailedPreconditionError(pipeline.model_problem.empty()
                                                  ? "the pipeline's shape is unknown"
                                                  : pipeline.model_problem);
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
      reported.model =
          absl::FailedPreconditionError(pipeline.whatif_model_problem.empty()
                                            ? "the report holds no what-if model for this pipeline"
                                            : pipeline.whatif_model_problem);
    }
    reported.rebalance_layers_after = pipeline.rebalance_layers_after;
    out.push_back(std::move(reported));
  }
  return out;
}

}  // namespace bubblescope

// A double as the shortest decimal that reads back as the same double: the JSON writer's numbers
// and the metrics file's samples (report/openmetrics.h) are spelt by this one helper.
#pragma once

#include <string>

namespace bubblescope::text {

// Appends the shortest decimal that reads back as `value` ("0.314", "1e-05", "48.31"); past 2^53
// in magnitude, where a double holds no fraction, the exponent form ("1.2e+20"), which readers
// that parse integers first (simdjson among them) take as a number rather than refusing 20 or
// more integer digits. `value` must be finite (NaN and infinities have no spelling shared by
// JSON and the metrics format). Returns false, appending nothing, if it cannot be formatted.
bool AppendShortestDouble(double value, std::string* out);

}  // namespace bubblescope::text

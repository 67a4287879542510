// The RecordCursor over CUPTI's own walker, cuptiActivityGetNextRecord. It needs libcupti but no
// GPU: the tests walk hand-filled buffers with it too, which checks that each record struct
// cupti_records.h chose has the size the CUPTI library steps over.
#pragma once

#include <cupti.h>

#include "activity_buffer.h"

namespace bubblescope::collector {

class CuptiCursor : public RecordCursor {
 public:
  NextRecord Next(uint8_t* buffer, size_t valid_bytes, CUpti_Activity** record) override {
    const CUptiResult result = cuptiActivityGetNextRecord(buffer, valid_bytes, record);
    if (result == CUPTI_SUCCESS) return NextRecord::kRecord;
    return result == CUPTI_ERROR_MAX_LIMIT_REACHED ? NextRecord::kEnd : NextRecord::kError;
  }
};

}  // namespace bubblescope::collector

// The status-propagation macros (common/status_macros.h): an error passes up unchanged (code and
// message), an OK value goes on, each expression is evaluated once, and the forms the tree uses
// (a declaration, `auto`, an existing variable, a move-only value, two in one scope, the body of
// an unbraced if) all compile and behave.
#include "common/status_macros.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"

namespace bubblescope {
namespace {

// Counts its calls, so that a test can tell an expression was evaluated once.
struct Source {
  int calls = 0;
  absl::Status Check(bool fail) {
    ++calls;
    return fail ? absl::InvalidArgumentError("trace.json: byte 12: bad number") : absl::OkStatus();
  }
  absl::StatusOr<int> Number(bool fail, int value) {
    ++calls;
    if (fail) return absl::NotFoundError("trace.json: no traceEvents");
    return value;
  }
};

absl::Status TwoChecks(Source& source, bool first_fails, bool second_fails, int* reached) {
  BUBBLESCOPE_RETURN_IF_ERROR(source.Check(first_fails));
  *reached = 1;
  BUBBLESCOPE_RETURN_IF_ERROR(source.Check(second_fails));
  *reached = 2;
  return absl::OkStatus();
}

TEST(StatusMacrosTest, ReturnIfErrorPassesTheFirstErrorUpUnchanged) {
  Source source;
  int reached = 0;
  const absl::Status status = TwoChecks(source, /*first_fails=*/true, false, &reached);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "trace.json: byte 12: bad number");
  EXPECT_EQ(reached, 0);
  EXPECT_EQ(source.calls, 1);
}

TEST(StatusMacrosTest, ReturnIfErrorGoesOnWhenOk) {
  Source source;
  int reached = 0;
  EXPECT_TRUE(TwoChecks(source, false, false, &reached).ok());
  EXPECT_EQ(reached, 2);
  EXPECT_EQ(source.calls, 2);  // each check evaluated once

  reached = 0;
  const absl::Status second = TwoChecks(source, false, /*second_fails=*/true, &reached);
  EXPECT_EQ(second.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(reached, 1);
}

// The macro as the body of an unbraced if with an else: the else binds to the caller's if.
int DanglingElse(Source& source, bool take_if, bool fail, absl::Status* out) {
  *out = [&]() -> absl::Status {
    if (take_if)
      BUBBLESCOPE_RETURN_IF_ERROR(source.Check(fail));
    else
      return absl::CancelledError("else branch");
    return absl::OkStatus();
  }();
  return source.calls;
}

TEST(StatusMacrosTest, ReturnIfErrorIsOneStatementUnderAnUnbracedIf) {
  Source source;
  absl::Status status;
  EXPECT_EQ(DanglingElse(source, /*take_if=*/true, /*fail=*/false, &status), 1);
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(DanglingElse(source, /*take_if=*/true, /*fail=*/true, &status), 2);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(DanglingElse(source, /*take_if=*/false, /*fail=*/true, &status), 2);  // not evaluated
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled);
}

// A declaration, `auto`, and two in one scope; the function returns a StatusOr of another type.
absl::StatusOr<std::string> SumOf(Source& source, bool first_fails, bool second_fails) {
  BUBBLESCOPE_ASSIGN_OR_RETURN(int first, source.Number(first_fails, 40));
  BUBBLESCOPE_ASSIGN_OR_RETURN(auto second, source.Number(second_fails, 2));
  return std::to_string(first + second);
}

TEST(StatusMacrosTest, AssignOrReturnDeclaresTheValue) {
  Source source;
  absl::StatusOr<std::string> sum = SumOf(source, false, false);
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(*sum, "42");
  EXPECT_EQ(source.calls, 2);
}

TEST(StatusMacrosTest, AssignOrReturnPassesTheErrorUpAndStops) {
  Source source;
  absl::StatusOr<std::string> first = SumOf(source, /*first_fails=*/true, false);
  EXPECT_EQ(first.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(first.status().message(), "trace.json: no traceEvents");
  EXPECT_EQ(source.calls, 1);  // the second was not evaluated

  absl::StatusOr<std::string> second = SumOf(source, false, /*second_fails=*/true);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(source.calls, 3);
}

// Into a variable that exists already, whose value an error leaves as it was.
absl::Status Update(Source& source, bool fail, int* total) {
  int value = -1;
  BUBBLESCOPE_ASSIGN_OR_RETURN(value, source.Number(fail, 7));
  *total += value;
  return absl::OkStatus();
}

TEST(StatusMacrosTest, AssignOrReturnIntoAnExistingVariable) {
  Source source;
  int total = 10;
  EXPECT_TRUE(Update(source, false, &total).ok());
  EXPECT_EQ(total, 17);
  EXPECT_EQ(Update(source, true, &total).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(total, 17);
}

absl::StatusOr<std::unique_ptr<int>> Boxed(int value) { return std::make_unique<int>(value); }

absl::StatusOr<int> Unboxed() {
  BUBBLESCOPE_ASSIGN_OR_RETURN(std::unique_ptr<int> box, Boxed(5));
  return *box;
}

TEST(StatusMacrosTest, AssignOrReturnMovesAMoveOnlyValue) {
  absl::StatusOr<int> value = Unboxed();
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(*value, 5);
}

}  // namespace
}  // namespace bubblescope

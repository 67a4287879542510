// Passing an error up without writing the check out each time.
//
//   BUBBLESCOPE_RETURN_IF_ERROR(WriteHeader(out));
//       returns the absl::Status of the expression from the enclosing function when it is not OK.
//   BUBBLESCOPE_ASSIGN_OR_RETURN(Rank rank, Decode(text, path));
//   BUBBLESCOPE_ASSIGN_OR_RETURN(existing, ReadExisting(path));
//       evaluates an absl::StatusOr once; returns its status when it is not OK, else moves its
//       value into the declaration or the variable on the left.
//
// The enclosing function returns absl::Status or any absl::StatusOr<T> (both take a Status).
// Where an error needs words of its own or something undone, write the check out instead: these
// pass the error on unchanged.
#pragma once

#include <utility>

#include "absl/status/status.h"

// The status is held in a variable of this name, declared in a scope of its own: a name no
// expression passed in would use.
#define BUBBLESCOPE_RETURN_IF_ERROR(expr)                       \
  do {                                                          \
    if (::absl::Status bubblescope_status_macro_error = (expr); \
        !bubblescope_status_macro_error.ok()) {                 \
      return bubblescope_status_macro_error;                    \
    }                                                           \
  } while (false)

// Expands to declarations in the enclosing scope (the left side may declare a variable), so it is
// a statement of its own in a braced block, not the body of an unbraced if or loop. The StatusOr
// is held under a name made unique by __COUNTER__, so that two in one scope do not collide.
#define BUBBLESCOPE_ASSIGN_OR_RETURN(lhs, expr) \
  BUBBLESCOPE_STATUS_MACRO_ASSIGN_OR_RETURN_(   \
      BUBBLESCOPE_STATUS_MACRO_CONCAT_(bubblescope_status_macro_or_, __COUNTER__), lhs, expr)

#define BUBBLESCOPE_STATUS_MACRO_ASSIGN_OR_RETURN_(statusor, lhs, expr) \
  auto statusor = (expr);                                               \
  if (!statusor.ok()) return std::move(statusor).status();              \
  lhs = *std::move(statusor)

// Two steps, so that __COUNTER__ is expanded before it is pasted.
#define BUBBLESCOPE_STATUS_MACRO_CONCAT_(a, b) BUBBLESCOPE_STATUS_MACRO_CONCAT_INNER_(a, b)
#define BUBBLESCOPE_STATUS_MACRO_CONCAT_INNER_(a, b) a##b

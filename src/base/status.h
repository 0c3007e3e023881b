// Status and Result<T>: the error model at every boundary (files, network,
// requests). Bugs use CHECK (check.h); exceptions never cross a boundary.
// Thread-safety: value types, no shared state.
#pragma once

#include <cstdlib>
#include <string>
#include <utility>
#include <variant>

namespace pg {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // bad user input (CLI flag, request field, file content)
  kNotFound,
  kOutOfRange,
  kCorrupt,  // a file or block that fails validation
  kResourceExhausted,
  kUnavailable,
  kUnimplemented,
  kIoError,
  kInternal,
  kCancelled,
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "code: message", one line.
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status OutOfRange(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
inline Status Corrupt(std::string m) { return {StatusCode::kCorrupt, std::move(m)}; }
inline Status ResourceExhausted(std::string m) { return {StatusCode::kResourceExhausted, std::move(m)}; }
inline Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status Unimplemented(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }
inline Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
inline Status Cancelled(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }

// Result<T>: either a T or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT: implicit on purpose
  Result(Status status) : v_(std::move(status)) {  // NOLINT
    if (std::get<Status>(v_).ok()) v_ = Status(StatusCode::kInternal, "Result built from OK status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace pg

#define PG_CONCAT_INNER(a, b) a##b
#define PG_CONCAT(a, b) PG_CONCAT_INNER(a, b)

// Returns the status from the enclosing function if it is not OK.
#define PG_RETURN_IF_ERROR(expr)     \
  do {                               \
    ::pg::Status _pg_st = (expr);    \
    if (!_pg_st.ok()) return _pg_st; \
  } while (0)

// PG_ASSIGN_OR_RETURN(auto x, MaybeX());
#define PG_ASSIGN_OR_RETURN(lhs, expr) PG_ASSIGN_OR_RETURN_IMPL(PG_CONCAT(_pg_r, __LINE__), lhs, expr)
#define PG_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()

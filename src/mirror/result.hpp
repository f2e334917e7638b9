// A value or an error message: the mirror's way to report bad input and kernel failures
// without exceptions (the daemon shows the message; nothing is half-changed on error).
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace c2c::mirror {

template <class T>
class Result {
 public:
  static Result ok(T v) {
    Result r;
    r.value_ = std::move(v);
    return r;
  }
  static Result fail(std::string error) {
    Result r;
    r.error_ = std::move(error);
    return r;
  }
  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  T& value() { return *value_; }
  const T& value() const { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  const std::string& error() const { return error_; }

 private:
  std::optional<T> value_;
  std::string error_;
};

}  // namespace c2c::mirror

// An independent, deliberately plain model of the controller (core/controller.hpp), written from
// spec/state-machine.md "The controller" and not from controller.cpp: its level ladder is an
// explicit list of actions, its memory a list of the level changes. The property test compares
// the two decision by decision.
#pragma once

#include <optional>
#include <vector>

#include "core/controller.hpp"

namespace c2c::property {

class NaiveController {
 public:
  explicit NaiveController(const ControllerSpec& s);
  // The ladder, built by walking the actions: index = level.
  const std::vector<LevelAction>& ladder_without_cpus() const { return ladder_; }
  LevelAction action(size_t level, const std::optional<CpuSet>& allowed) const;
  size_t top() const { return ladder_.size() - 1; }

  // One input; returns the new level and the rule's name as the spec names it.
  struct Outcome {
    size_t level;
    const char* rule;
  };
  Outcome window(Nanos now, std::optional<Nanos> p99);
  Outcome tick(Nanos now);
  size_t level() const { return changes_.empty() ? 0 : changes_.back().level; }

 private:
  struct Change {
    Nanos at;
    size_t level;
  };
  Outcome step(Nanos now, bool is_window, std::optional<Nanos> p99);
  void change(Nanos now, size_t level) { changes_.push_back({now, level}); }
  ControllerSpec s_;
  std::vector<LevelAction> ladder_;
  std::vector<Change> changes_;
  std::optional<Nanos> heard_;  // the last window with a signal
};

}  // namespace c2c::property

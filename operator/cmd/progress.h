#ifndef BSW_CMD_PROGRESS_H_
#define BSW_CMD_PROGRESS_H_

#include <cstdio>
#include <deque>
#include <string>

#include "operator/controller/sweep_controller.h"

namespace bsw {

// What `budgetsweep run` shows while a sweep runs: on a terminal, a view redrawn in place;
// otherwise one plain line per event. Writes to `out`.
class Progress {
 public:
  Progress(std::FILE* out, bool live) : out_(out), live_(live) {}

  // One line per journaled event (kept for the live view's recent-events list).
  void OnEvent(const SweepController& controller, const Event& event);

  // Redraws the live view; prints a budget line every so often otherwise.
  void Refresh(const SweepController& controller, double now);

  // The closing summary: phase, best trial, budget, trial counts, rungs, the probe phase's outcome.
  static std::string Summary(const SweepController& controller, const std::string& state_dir);

 private:
  std::string Describe(const SweepController& controller, const Event& event) const;
  // Replaces the view drawn last with `text`.
  void Redraw(const std::string& text);

  std::FILE* out_;
  bool live_;
  int lines_drawn_ = 0;
  double last_plain_report_ = 0;
  std::deque<std::string> recent_;
};

}  // namespace bsw

#endif  // BSW_CMD_PROGRESS_H_

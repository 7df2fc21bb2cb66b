#ifndef BSW_REPORT_CHARTS_H_
#define BSW_REPORT_CHARTS_H_

#include <optional>
#include <vector>

#include "operator/core/api.h"
#include "operator/core/search_space.h"
#include "operator/core/sweep_model.h"
#include "operator/report/canvas.h"
#include "operator/report/history.h"

// The report's charts. Each draws on a canvas of `width` × `height` pixels: title, subtitle and
// legend at the top, the plot with its axes below them.
namespace bsw::report {

// Best objective so far against device-hours spent: every recorded value as a dot coloured by
// its rung, and the best so far as a step line up to what the sweep has spent. The budget cap is
// drawn once the spending nears it.
void DrawBestChart(Canvas& c, const History& h, double width, double height);

// The rung ladder: each trial's objective at each rung it reached, joined by a line; a triangle
// where it went on (continued, or promoted), and its phase's marker where it ends.
void DrawLadderChart(Canvas& c, const History& h, double width, double height);

// Used, reserved and remaining device-hours over the sweep's time, under the cap. `events` are
// the ones `h` was built from.
void DrawBurnDownChart(Canvas& c, const History& h, const std::vector<Event>& events, double width,
                       double height);

// Objective against one parameter: each trial at its latest rung value, coloured by that rung.
// Choice values spread sideways a little, so that trials with the same value stay apart.
void DrawParamChart(Canvas& c, const History& h, const ParamSpec& param, double width,
                    double height);

// The probe phase: samples/s of every probe run, green where it met the utilization gate, with
// the chosen candidate in bold; a run that measured nothing says why.
void DrawProbeChart(Canvas& c, const History& h, double width, double height);

// Where a trial's value of `param` sits on its chart's x axis: the number itself, or the index of
// a choice or grid value. Nothing when `params` lacks it (or holds a value `param` does not).
std::optional<double> ParamPosition(const ParamSpec& param, const Config& params);

}  // namespace bsw::report

#endif  // BSW_REPORT_CHARTS_H_

#ifndef BSW_REPORT_CANVAS_H_
#define BSW_REPORT_CANVAS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"

// The surfaces the report's charts draw on: SVG for the page, a raster for PNG.
namespace bsw::report {

struct Color {
  uint8_t r = 0, g = 0, b = 0;
};
constexpr Color Rgb(uint32_t hex) {
  return {static_cast<uint8_t>(hex >> 16), static_cast<uint8_t>(hex >> 8),
          static_cast<uint8_t>(hex)};
}

// The colour of text and lines unless a style says otherwise.
constexpr Color kInk = Rgb(0x222222);

struct Point {
  double x = 0, y = 0;
};
struct Stroke {
  Color color = kInk;
  double width = 1;
  bool dashed = false;
  double opacity = 1;
};
enum class Anchor { kStart, kMiddle, kEnd };
struct TextStyle {
  double size = 13;
  Anchor anchor = Anchor::kStart;
  Color color = kInk;
  bool bold = false;
  bool vertical = false;  // reads upwards
};

// A surface the charts draw on, in pixels from the top left: SVG for the page, a raster for PNG.
class Canvas {
 public:
  virtual ~Canvas() = default;
  virtual void Line(const std::vector<Point>& points, const Stroke& stroke) = 0;
  // Fills a polygon (even-odd rule).
  virtual void Fill(const std::vector<Point>& polygon, Color color, double opacity = 1) = 0;
  virtual void Dot(Point center, double radius, Color color) = 0;
  // An invisible disc that shows `tooltip` on hover, where the surface can.
  virtual void Hover(Point center, double radius, const std::string& tooltip) = 0;
  // Text whose baseline passes through `at` (for vertical text, runs upwards from it).
  virtual void Text(Point at, const std::string& text, const TextStyle& style) = 0;
  // The width in pixels of `text` drawn at font size `size`.
  virtual double TextWidth(const std::string& text, double size) const = 0;
};

// Runs `draw` on an SVG surface of `width` × `height` pixels and returns the <svg> element: class
// "chart", sans-serif text, and `label` as its accessible name.
std::string RenderSvg(int width, int height, const std::string& label,
                      const std::function<void(Canvas&)>& draw);

// Runs `draw` on a white raster of `width` × `height` pixels and returns it as RGB PNG bytes. The
// raster draws text in a built-in bitmap font and ignores Hover. InternalError when libpng fails.
[[nodiscard]] StatusOr<std::string> RenderPng(int width, int height,
                                              const std::function<void(Canvas&)>& draw);

}  // namespace bsw::report

#endif  // BSW_REPORT_CANVAS_H_

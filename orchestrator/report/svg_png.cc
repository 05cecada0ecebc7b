#include "orchestrator/report/svg_png.h"

#include <cairo.h>
#include <librsvg/rsvg.h>

#include <cmath>
#include <memory>

#include <fmt/format.h>

namespace collide::orchestrator::report {
namespace {

struct GErrorFree {
  void operator()(GError* e) const { g_error_free(e); }
};
struct GObjectUnref {
  void operator()(RsvgHandle* h) const { g_object_unref(h); }
};
struct SurfaceDestroy {
  void operator()(cairo_surface_t* s) const { cairo_surface_destroy(s); }
};
struct CairoDestroy {
  void operator()(cairo_t* c) const { cairo_destroy(c); }
};

}  // namespace

bool png_rendering_available() { return true; }

Status write_svg_png(const std::string& svg, const std::filesystem::path& png) {
  GError* raw_error = nullptr;
  std::unique_ptr<RsvgHandle, GObjectUnref> handle(rsvg_handle_new_from_data(
      reinterpret_cast<const guint8*>(svg.data()), svg.size(), &raw_error));
  std::unique_ptr<GError, GErrorFree> error(raw_error);
  if (!handle) {
    return invalid_argument(fmt::format("cannot read the SVG for {}: {}", png.string(),
                                        error ? error->message : "unknown error"));
  }
  gdouble width = 0, height = 0;
  if (!rsvg_handle_get_intrinsic_size_in_pixels(handle.get(), &width, &height) || width < 1 || height < 1) {
    return invalid_argument(fmt::format("the SVG for {} declares no size in pixels", png.string()));
  }
  std::unique_ptr<cairo_surface_t, SurfaceDestroy> surface(cairo_image_surface_create(
      CAIRO_FORMAT_ARGB32, static_cast<int>(std::ceil(width)), static_cast<int>(std::ceil(height))));
  if (cairo_surface_status(surface.get()) != CAIRO_STATUS_SUCCESS) {
    return unavailable(fmt::format("cannot make a {}x{} image for {}", width, height, png.string()));
  }
  std::unique_ptr<cairo_t, CairoDestroy> cr(cairo_create(surface.get()));
  const RsvgRectangle viewport{0, 0, width, height};
  raw_error = nullptr;
  if (!rsvg_handle_render_document(handle.get(), cr.get(), &viewport, &raw_error)) {
    error.reset(raw_error);
    return invalid_argument(fmt::format("cannot draw the SVG for {}: {}", png.string(),
                                        error ? error->message : "unknown error"));
  }
  const cairo_status_t written = cairo_surface_write_to_png(surface.get(), png.c_str());
  if (written != CAIRO_STATUS_SUCCESS) {
    return unavailable(fmt::format("cannot write {}: {}", png.string(), cairo_status_to_string(written)));
  }
  return {};
}

}  // namespace collide::orchestrator::report

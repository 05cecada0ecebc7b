#include "orchestrator/report/svg_png.h"

#include <cairo.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "orchestrator/report/curve_svg.h"
#include "tests/support/status_matchers.h"

namespace collide::orchestrator::report {
namespace {

class SvgPngTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("collide-svg-png-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

uint32_t big_endian(const std::string& bytes, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
  return v;
}

TEST_F(SvgPngTest, ACurveBecomesAPngOfItsSizeWithTheCurveDrawn) {
  ASSERT_TRUE(png_rendering_available());
  CurveChart chart;
  chart.id = "slowdown";
  chart.title = "Slowdown";
  chart.x_label = "faults[0].probability";
  chart.y_label = "slowdown (x)";
  chart.curves.push_back({"loss", {{0.001, 1, "0.1%"}, {0.01, 2, "1%"}, {0.05, 6, "5%"}}});
  const auto png = dir_ / "slowdown.png";
  Status written = write_svg_png(curve_svg(chart), png);
  ASSERT_TRUE(written.ok()) << written.to_string();

  std::ifstream in(png, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 33u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(bytes.substr(12, 4), "IHDR");
  EXPECT_EQ(big_endian(bytes, 16), static_cast<uint32_t>(kCurveWidth));
  EXPECT_EQ(big_endian(bytes, 20), static_cast<uint32_t>(kCurveHeight));
  EXPECT_EQ(bytes.substr(bytes.size() - 8, 4), "IEND");

  // It decodes, white where nothing is drawn, and the first curve's colour (#1f77b4) is there.
  cairo_surface_t* image = cairo_image_surface_create_from_png(png.c_str());
  ASSERT_EQ(cairo_surface_status(image), CAIRO_STATUS_SUCCESS);
  EXPECT_EQ(cairo_image_surface_get_width(image), kCurveWidth);
  EXPECT_EQ(cairo_image_surface_get_height(image), kCurveHeight);
  cairo_surface_flush(image);
  const unsigned char* data = cairo_image_surface_get_data(image);
  const int stride = cairo_image_surface_get_stride(image);
  auto pixel = [&](int x, int y) {
    uint32_t v;
    std::memcpy(&v, data + y * stride + x * 4, 4);
    return v & 0xffffff;  // native-endian ARGB32, alpha dropped
  };
  EXPECT_EQ(pixel(2, 2), 0xffffffu);
  int curve_pixels = 0;
  for (int y = 0; y < kCurveHeight; ++y) {
    for (int x = 0; x < kCurveWidth; ++x) curve_pixels += pixel(x, y) == 0x1f77b4u;
  }
  EXPECT_GT(curve_pixels, 100);
  cairo_surface_destroy(image);
}

TEST_F(SvgPngTest, TextThatIsNotSvgIsAnErrorAndWritesNothing) {
  const auto png = dir_ / "bad.png";
  Status written = write_svg_png("<html>not a drawing", png);
  EXPECT_THAT(written, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(written.message(), ::testing::HasSubstr("bad.png"));
  EXPECT_FALSE(std::filesystem::exists(png));
}

TEST_F(SvgPngTest, AFolderThatCannotBeWrittenIsAnErrorNamingTheFile) {
  const auto png = dir_ / "no-such-folder" / "x.png";
  CurveChart chart;
  chart.id = "x";
  Status written = write_svg_png(curve_svg(chart), png);
  EXPECT_THAT(written, StatusIs(StatusCode::kUnavailable));
  EXPECT_THAT(written.message(), ::testing::HasSubstr("x.png"));
}

}  // namespace
}  // namespace collide::orchestrator::report

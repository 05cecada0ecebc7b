#include "orchestrator/report/junit_xml.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>

#include <fmt/format.h>

namespace collide::orchestrator::report {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The length of the valid UTF-8 sequence at text[i] and its code point; 0 when it is not valid
// (a stray continuation byte, a truncated, overlong or surrogate sequence, or beyond U+10FFFF).
size_t utf8_sequence(std::string_view text, size_t i, uint32_t& code) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  size_t len = 0;
  if (lead < 0x80) {
    code = lead;
    return 1;
  }
  if ((lead & 0xE0) == 0xC0) {
    len = 2;
    code = lead & 0x1F;
  } else if ((lead & 0xF0) == 0xE0) {
    len = 3;
    code = lead & 0x0F;
  } else if ((lead & 0xF8) == 0xF0) {
    len = 4;
    code = lead & 0x07;
  } else {
    return 0;
  }
  if (i + len > text.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  static constexpr uint32_t kMinimum[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < kMinimum[len] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return len;
}

// XML 1.0's Char production: tab, line feed, carriage return, and the rest from U+0020 up,
// less U+FFFE and U+FFFF (surrogates never decode).
bool xml_char(uint32_t code) {
  if (code < 0x20) return code == 0x9 || code == 0xA || code == 0xD;
  return code != 0xFFFE && code != 0xFFFF;
}

std::string seconds_text(double seconds) { return fmt::format("{:.3f}", std::max(0.0, seconds)); }

size_t count(const std::vector<ExpectationOutcome>& cases, Verdict verdict) {
  return static_cast<size_t>(std::count_if(cases.begin(), cases.end(),
                                           [&](const ExpectationOutcome& c) { return c.verdict == verdict; }));
}

std::string case_body(const ExpectationOutcome& c) {
  std::string body = c.measured.empty() ? "" : "measured: " + c.measured;
  if (!c.message.empty()) body += (body.empty() ? "" : "\n") + c.message;
  return body;
}

}  // namespace

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    uint32_t code = 0;
    const size_t len = utf8_sequence(text, i, code);
    if (len == 0 || !xml_char(code)) {
      out += kReplacement;
      i += std::max<size_t>(len, 1);
      continue;
    }
    switch (code) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\t': out += "&#9;"; break;
      case '\n': out += "&#10;"; break;
      case '\r': out += "&#13;"; break;
      default: out.append(text.substr(i, len));
    }
    i += len;
  }
  return out;
}

namespace {

struct Counts {
  size_t tests = 0, failures = 0, errors = 0;
  double seconds = 0;
  std::string attributes() const {
    return fmt::format(R"(tests="{}" failures="{}" errors="{}" skipped="0" time="{}")", tests, failures, errors,
                       seconds_text(seconds));
  }
};

Counts counts_of(const JUnitSuite& suite) {
  return {suite.cases.size(), count(suite.cases, Verdict::kFail), count(suite.cases, Verdict::kError), suite.seconds};
}

std::string suite_xml(const JUnitSuite& suite) {
  std::string out = fmt::format("  <testsuite name=\"{}\" {} timestamp=\"{}\">\n", xml_escape(suite.name),
                                counts_of(suite).attributes(), xml_escape(suite.timestamp));
  if (!suite.properties.empty()) {
    out += "    <properties>\n";
    for (const auto& [name, value] : suite.properties) {
      out += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", xml_escape(name), xml_escape(value));
    }
    out += "    </properties>\n";
  }
  const std::string classname = xml_escape("collide." + suite.name);
  for (const ExpectationOutcome& c : suite.cases) {
    // Judging an expectation takes no time of its own; the run's time is the suite's.
    out += fmt::format("    <testcase name=\"{}\" classname=\"{}\" time=\"0.000\">\n", xml_escape(c.name), classname);
    const std::string body = xml_escape(case_body(c));
    if (c.verdict == Verdict::kFail) {
      out += fmt::format("      <failure message=\"{}\" type=\"expectation\">{}</failure>\n", xml_escape(c.message), body);
    } else if (c.verdict == Verdict::kError) {
      out += fmt::format("      <error message=\"{}\" type=\"not-evaluated\">{}</error>\n", xml_escape(c.message), body);
    } else if (!body.empty()) {
      out += fmt::format("      <system-out>{}</system-out>\n", body);
    }
    out += "    </testcase>\n";
  }
  if (!suite.system_err.empty()) out += fmt::format("    <system-err>{}</system-err>\n", xml_escape(suite.system_err));
  out += "  </testsuite>\n";
  return out;
}

}  // namespace

std::string junit_xml(const std::vector<JUnitSuite>& suites) {
  Counts total;
  std::string body;
  for (const JUnitSuite& suite : suites) {
    const Counts c = counts_of(suite);
    total.tests += c.tests;
    total.failures += c.failures;
    total.errors += c.errors;
    total.seconds += c.seconds;
    body += suite_xml(suite);
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" +
         fmt::format("<testsuites name=\"collide\" {}>\n", total.attributes()) + body + "</testsuites>\n";
}

std::string junit_xml(const JUnitSuite& suite) { return junit_xml(std::vector<JUnitSuite>{suite}); }

Status write_file_atomically(const std::filesystem::path& path, const std::string& text) {
  // A name of this process's own beside the target: the rename stays on one file system.
  const std::filesystem::path tmp = path.string() + fmt::format(".{}.tmp", ::getpid());
  std::error_code ec;
  {
    std::ofstream out(tmp, std::ios::trunc | std::ios::binary);
    out << text;
    out.close();
    if (!out.good()) {
      std::filesystem::remove(tmp, ec);
      return unavailable(fmt::format("cannot write {}", tmp.string()));
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    return unavailable(fmt::format("cannot rename {} to {}: {}", tmp.string(), path.string(), ec.message()));
  }
  return {};
}

}  // namespace collide::orchestrator::report

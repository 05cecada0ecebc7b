#include "orchestrator/report/flap_survival.h"

#include <algorithm>
#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/parse_number.h"
#include "orchestrator/replay/transport_options.h"

namespace collide::orchestrator::report {
namespace {

constexpr double kNsPerMs = 1e6;

// "faults[3].duration_ns" -> 3; nothing for any other field.
std::optional<int> flap_duration_index(const std::string& field) {
  static const std::regex pattern(R"(^faults\[(\d+)\]\.duration_ns$)");
  std::smatch m;
  if (!std::regex_match(field, m, pattern)) return std::nullopt;
  auto index = parse_number<int>(m[1].str(), "fault index");
  if (!index.ok()) return std::nullopt;
  return *index;
}

// One host's failure, "h1: NET/IB: rank 1 got completion from rank 0 (10.0.0.1) with error 12
// (IBV_WC_RETRY_EXC_ERR) on QP 0x1a: ...", into the point's fields.
void read_failure(const std::string& text, v1::SurvivalPoint& point) {
  static const std::regex pattern(R"(^(.*?):? ?NET/IB: rank (\d+) got completion from rank (\d+) .*? on QP (0x[0-9a-fA-F]+))");
  point.set_failure(text);
  point.set_rank(-1);
  point.set_peer_rank(-1);
  std::smatch m;
  if (!std::regex_search(text, m, pattern)) return;
  point.set_host(m[1].str());
  if (auto rank = parse_number<int32_t>(m[2].str(), "rank"); rank.ok()) point.set_rank(*rank);
  if (auto peer = parse_number<int32_t>(m[3].str(), "peer rank"); peer.ok()) point.set_peer_rank(*peer);
  point.set_qp(m[4].str());
}

std::vector<std::string> split(const std::string& text, const std::string& separator) {
  std::vector<std::string> out;
  for (size_t at = 0; at < text.size();) {
    size_t next = text.find(separator, at);
    if (next == std::string::npos) next = text.size();
    if (next > at) out.push_back(text.substr(at, next - at));
    at = next + separator.size();
  }
  return out;
}

// The hosts' failures of one failed run's line ("  <variant> (repetition <n>): <host failure>;
// <host failure>; "), as the run command writes it; nothing when the line is another's.
std::optional<std::vector<std::string>> run_failures(const std::string& line, const std::string& variant) {
  if (line.rfind("  " + variant + " (repetition ", 0) != 0) return std::nullopt;
  const size_t colon = line.find("): ");
  if (colon == std::string::npos) return std::nullopt;
  return split(line.substr(colon + 3), "; ");
}

bool retry_exceeded(const std::string& host_failure) {
  return host_failure.find("IBV_WC_RETRY_EXC_ERR") != std::string::npos;
}

// The first failure of `variant`'s runs in a point's failure text: the first retry-exceeded
// completion, else the run's first failure, else the whole text.
std::string first_failure(const std::string& failures, const std::string& variant) {
  for (const std::string& line : split(failures, "\n")) {
    auto hosts = run_failures(line, variant);
    if (!hosts || hosts->empty()) continue;
    for (const auto& h : *hosts) {
      if (retry_exceeded(h)) return h;
    }
    return hosts->front();
  }
  return failures;
}

std::string ms(double value) { return fmt::format("{:.3g} ms", value); }

void judge(v1::SweepSurvival& s) {
  bool any_survived = false, any_died = false;
  double survived = 0, fatal = 0;
  for (const auto& p : s.points()) {
    if (p.survived()) {
      any_survived = true;
      survived = std::max(survived, p.duration_ms());
    } else if (!any_died || p.duration_ms() < fatal) {
      any_died = true;
      fatal = p.duration_ms();
    }
  }
  if (any_survived) s.set_longest_survived_ms(survived);
  if (any_died) s.set_shortest_fatal_ms(fatal);
  if (!any_survived || !any_died) {
    s.set_verdict(fmt::format("the sweep does not bracket the limit: {}; the arithmetic says {}",
                              any_died ? "no duration was survived" : "no duration was fatal", ms(s.limit_ms())));
    return;
  }
  if (survived > fatal) {
    s.set_verdict(fmt::format("not monotonic: {} was survived but {} was fatal", ms(survived), ms(fatal)));
    return;
  }
  const double step = fatal - survived;
  s.set_step_ms(step);
  // How far the arithmetic lies outside (survived, fatal], where the measured limit is.
  const double off = s.limit_ms() <= survived ? survived - s.limit_ms()
                     : s.limit_ms() > fatal   ? s.limit_ms() - fatal
                                              : 0.0;
  s.set_within_one_step(off <= step);
  s.set_verdict(fmt::format("the job survived {} and died at {}; the arithmetic limit {} lies {} (the step is {})",
                            ms(survived), ms(fatal), ms(s.limit_ms()),
                            off == 0        ? "between them"
                            : off <= step   ? fmt::format("{} outside them, within one step", ms(off))
                                            : fmt::format("{} outside them, more than one step", ms(off)),
                            ms(step)));
}

}  // namespace

Result<RetryArithmetic> retry_arithmetic(const v1::TransportSettings& settings) {
  auto options = replay::resolve_transport(settings);
  if (!options.ok()) return options.status();
  const auto& qp = options->qp;
  RetryArithmetic a;
  a.timeout_exponent = qp.timeout_exponent;
  a.timeout_scale = qp.timeout_scale;
  a.retry_count = qp.retry_count;
  // The transport's own per-attempt wait, so that the arithmetic rounds as the timer does.
  a.timeout_ms = static_cast<double>(qp.timeout_ns()) / kNsPerMs;
  a.attempts = qp.retry_count + 1;
  a.limit_ms = a.timeout_ms * a.attempts;
  a.last_resend_ms = a.timeout_ms * qp.retry_count;
  return a;
}

std::optional<v1::SweepSurvival> flap_survival(const v1::Scenario& scenario, const v1::SweepResults& sweep) {
  for (int f = 0; f < sweep.fields_size(); ++f) {
    const auto index = flap_duration_index(sweep.fields(f));
    if (!index || *index >= scenario.faults_size()) continue;
    const v1::Fault& fault = scenario.faults(*index);
    // A blackhole is a flap's data-plane half: the same outage without the carrier's restore time.
    if (fault.kind() != v1::Fault::KIND_LINK_FLAP && fault.kind() != v1::Fault::KIND_BLACKHOLE) continue;
    const v1::Variant* variant = nullptr;
    for (const auto& v : scenario.runs().variants()) {
      if (std::find(v.faults().begin(), v.faults().end(), fault.name()) != v.faults().end()) {
        variant = &v;
        break;
      }
    }
    if (variant == nullptr) continue;
    v1::TransportSettings transport = scenario.transport();
    transport.MergeFrom(variant->transport());
    auto arithmetic = retry_arithmetic(transport);
    if (!arithmetic.ok()) continue;  // such a scenario is refused at load; nothing to compare with
    v1::SweepSurvival s;
    s.set_field(sweep.fields(f));
    s.set_fault(fault.name());
    s.set_variant(variant->name());
    s.set_timeout_exponent(arithmetic->timeout_exponent);
    s.set_timeout_scale(arithmetic->timeout_scale);
    s.set_retry_count(arithmetic->retry_count);
    s.set_timeout_ms(arithmetic->timeout_ms);
    s.set_attempts(arithmetic->attempts);
    s.set_limit_ms(arithmetic->limit_ms);
    s.set_last_resend_ms(arithmetic->last_resend_ms);
    std::vector<v1::SurvivalPoint> points;
    for (const v1::SweepPointResults& at : sweep.points()) {
      if (f >= at.settings_size()) continue;
      v1::SurvivalPoint p;
      p.set_text(at.settings(f).text());
      p.set_duration_ms(at.settings(f).value() / kNsPerMs);
      p.set_rank(-1);
      p.set_peer_rank(-1);
      const v1::SweepVariantPoint* ran = nullptr;
      for (const auto& v : at.variants()) {
        if (v.name() == variant->name()) ran = &v;
      }
      if (ran != nullptr) {
        p.set_runs(ran->runs());
        p.set_failed_runs(ran->failed_runs());
      }
      // A point that did not run at all (no variants) survived nothing.
      p.set_survived(ran != nullptr && ran->runs() > 0 && ran->failed_runs() == 0);
      if (!p.survived()) read_failure(first_failure(at.failure(), variant->name()), p);
      points.push_back(std::move(p));
    }
    std::stable_sort(points.begin(), points.end(),
                     [](const auto& a, const auto& b) { return a.duration_ms() < b.duration_ms(); });
    for (auto& p : points) *s.add_points() = std::move(p);
    judge(s);
    return s;
  }
  return std::nullopt;
}

bool died_as_measured(const std::string& failures, const std::string& variant) {
  const std::vector<std::string> lines = split(failures, "\n");
  if (lines.size() < 2 || lines.front().find(" run(s) failed:") == std::string::npos) return false;
  for (size_t i = 1; i < lines.size(); ++i) {
    auto hosts = run_failures(lines[i], variant);
    if (!hosts || std::none_of(hosts->begin(), hosts->end(), retry_exceeded)) return false;
  }
  return true;
}

std::string survival_text(const v1::SweepSurvival& s) {
  std::string out = fmt::format(
      "survival of {} ({}, variant {}): timeout {} per attempt (4.096 us x 2^{} x {}), {} attempts "
      "(retry_count {} + 1): limit {} (last resend at {})\n",
      s.fault(), s.field(), s.variant(), ms(s.timeout_ms()), s.timeout_exponent(), s.timeout_scale(), s.attempts(),
      s.retry_count(), ms(s.limit_ms()), ms(s.last_resend_ms()));
  for (const auto& p : s.points()) {
    if (p.survived()) {
      out += fmt::format("  {:>8}  survived ({} run(s))\n", p.text(), p.runs());
    } else if (!p.qp().empty()) {
      out += fmt::format("  {:>8}  died: {} rank {} <- rank {}, QP {}: {}\n", p.text(), p.host(), p.rank(),
                         p.peer_rank(), p.qp(), p.failure());
    } else {
      out += fmt::format("  {:>8}  died: {}\n", p.text(), p.failure());
    }
  }
  out += fmt::format("  {}: {}\n", s.within_one_step() ? "within one step" : "NOT within one step", s.verdict());
  return out;
}

}  // namespace collide::orchestrator::report

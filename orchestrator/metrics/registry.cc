#include "orchestrator/metrics/registry.h"

#include <cmath>

#include <fmt/format.h>

namespace collide::orchestrator::metrics {
namespace {

// Prometheus names: [a-zA-Z_:][a-zA-Z0-9_:]*, labels the same without ':'. Anything else becomes
// '_' so that a name built from, say, a variant's name can never break the exposition.
std::string sanitize(const std::string& name, bool allow_colon) {
  std::string out = name.empty() ? "_" : name;
  for (size_t i = 0; i < out.size(); ++i) {
    const char c = out[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                    (allow_colon && c == ':') || (i > 0 && c >= '0' && c <= '9');
    if (!ok) out[i] = '_';
  }
  return out;
}

std::string escape(const std::string& s, bool quote) {
  std::string out;
  for (char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (quote && c == '"') {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

std::string value_text(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  // Whole numbers as integers: counters read better as 1234 than as 1234.0 or 1.234e+03.
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{:.0f}", v);
  return fmt::format("{}", v);
}

Labels sanitized(const Labels& labels) {
  Labels out;
  for (const auto& [k, v] : labels) out[sanitize(k, false)] = v;
  return out;
}

}  // namespace

void Registry::describe(const std::string& name, const std::string& help, const std::string& type) {
  std::lock_guard lock(mutex_);
  Family& f = families_[sanitize(name, true)];
  f.help = help;
  f.type = type == "counter" ? "counter" : "gauge";
}

void Registry::set(const std::string& name, const Labels& labels, double value) {
  std::lock_guard lock(mutex_);
  families_[sanitize(name, true)].values[sanitized(labels)] = value;
}

void Registry::add(const std::string& name, const Labels& labels, double delta) {
  std::lock_guard lock(mutex_);
  families_[sanitize(name, true)].values[sanitized(labels)] += delta;
}

std::string Registry::render() const {
  std::lock_guard lock(mutex_);
  std::string out;
  for (const auto& [name, f] : families_) {
    if (!f.help.empty()) out += fmt::format("# HELP {} {}\n", name, escape(f.help, false));
    out += fmt::format("# TYPE {} {}\n", name, f.type);
    for (const auto& [labels, value] : f.values) {
      out += name;
      if (!labels.empty()) {
        out += '{';
        bool first = true;
        for (const auto& [k, v] : labels) {
          out += fmt::format("{}{}=\"{}\"", first ? "" : ",", k, escape(v, true));
          first = false;
        }
        out += '}';
      }
      out += ' ' + value_text(value) + '\n';
    }
  }
  return out;
}

}  // namespace collide::orchestrator::metrics

//===- Profiler.cpp - per-kernel timing with CUDA events ------------------===//

#include "Profiler.h"

#include <algorithm>
#include <cstdio>
#include <map>

using namespace kiln;
using namespace kiln::rt;

void Profiler::begin(CUstream stream, std::string name, std::string kind) {
  size_t first = pending_.size() * 2;
  while (pool_.size() < first + 2)
    pool_.push_back(std::make_unique<Event>());
  pool_[first]->record(stream);
  pending_.push_back({std::move(name), std::move(kind), first});
}

void Profiler::end(CUstream stream) { pool_[pending_.back().events + 1]->record(stream); }

void Profiler::finishRun() {
  if (pending_.empty())
    return;
  int run = static_cast<int>(runSpansMs_.size());
  double first = 0, last = 0;
  for (size_t i = 0; i < pending_.size(); ++i) {
    const Pending &p = pending_[i];
    double start = pool_[p.events]->since(origin_);
    double duration = pool_[p.events + 1]->since(*pool_[p.events]);
    records_.push_back({p.name, p.kind, start, duration, run});
    first = i ? std::min(first, start) : start;
    last = i ? std::max(last, start + duration) : start + duration;
  }
  runSpansMs_.push_back(last - first);
  pending_.clear();
}

std::vector<KernelProfile> Profiler::table() const {
  std::map<std::string, KernelProfile> byName;
  for (const Record &r : records_) {
    KernelProfile &row = byName[r.name];
    row.name = r.name;
    row.kind = r.kind;
    row.calls += 1;
    row.totalMs += r.durationMs;
  }
  double runMs = 0;
  for (double span : runSpansMs_)
    runMs += span;
  std::vector<KernelProfile> rows;
  for (auto &[name, row] : byName) {
    row.meanMs = row.totalMs / row.calls;
    row.percentOfRun = runMs > 0 ? 100.0 * row.totalMs / runMs : 0;
    rows.push_back(row);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const KernelProfile &a, const KernelProfile &b) {
    return a.totalMs > b.totalMs;
  });
  return rows;
}

std::vector<TraceEvent> Profiler::events() const {
  std::vector<TraceEvent> out;
  for (const Record &r : records_)
    out.push_back({r.name, r.kind, sessionId_, r.run, r.startMs, r.durationMs});
  return out;
}

std::string Profiler::tableText() const {
  std::vector<KernelProfile> rows = table();
  size_t width = 6;
  for (const KernelProfile &row : rows)
    width = std::max(width, row.name.size());
  std::string text;
  char line[512];
  std::snprintf(line, sizeof(line), "%-*s  %-14s %6s %12s %12s %7s\n", int(width), "kernel",
                "kind", "calls", "total ms", "mean ms", "% run");
  text += line;
  double runMs = 0;
  for (double span : runSpansMs_)
    runMs += span;
  for (const KernelProfile &row : rows) {
    std::snprintf(line, sizeof(line), "%-*s  %-14s %6zu %12.4f %12.4f %6.1f%%\n", int(width),
                  row.name.c_str(), row.kind.c_str(), row.calls, row.totalMs, row.meanMs,
                  row.percentOfRun);
    text += line;
  }
  std::snprintf(line, sizeof(line),
                "%zu runs, %.4f ms of device time per run (first start to last end)\n",
                runSpansMs_.size(), runSpansMs_.empty() ? 0.0 : runMs / runSpansMs_.size());
  text += line;
  return text;
}

namespace {
std::string jsonEscape(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (static_cast<unsigned char>(c) < 0x20)
      continue;
    out += c;
  }
  return out;
}
} // namespace

std::string Profiler::chromeTrace() const {
  std::string json = "{\"traceEvents\":[";
  char event[256];
  bool first = true;
  std::snprintf(event, sizeof(event),
                "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":%d,"
                "\"args\":{\"name\":\"session %d\"}}",
                sessionId_, sessionId_);
  json += event;
  first = false;
  for (const Record &r : records_) {
    std::snprintf(event, sizeof(event),
                  "\"ph\":\"X\",\"pid\":0,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,"
                  "\"args\":{\"run\":%d}}",
                  sessionId_, r.startMs * 1000.0, r.durationMs * 1000.0, r.run);
    json += std::string(first ? "" : ",") + "{\"name\":\"" + jsonEscape(r.name) +
            "\",\"cat\":\"" + jsonEscape(r.kind) + "\"," + event;
  }
  return json + "]}\n";
}

void Profiler::reset() {
  records_.clear();
  runSpansMs_.clear();
  pending_.clear();
}

std::string kiln::mergeChromeTraces(const std::vector<std::string> &traces) {
  // Each trace is {"traceEvents":[...]}: splice the arrays.
  std::string merged = "{\"traceEvents\":[";
  bool any = false;
  for (const std::string &trace : traces) {
    size_t open = trace.find('['), close = trace.rfind(']');
    if (open == std::string::npos || close == std::string::npos || close <= open + 1)
      continue;
    merged += (any ? "," : "") + trace.substr(open + 1, close - open - 1);
    any = true;
  }
  return merged + "]}\n";
}

//===- Profiler.h - per-kernel timing with CUDA events ----------*- C++ -*-===//
//
// A session in profiling mode brackets every launch and copy with a pair of
// events from a pool, resolves them after the run (when they are done), and
// keeps one record per operation. Start times are measured from the model's
// origin event, so records of all sessions of a model share a time base and
// their Chrome traces line up.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_PROFILER_H
#define KILN_RUNTIME_PROFILER_H

#include "kiln/kiln.h"
#include "kiln/runtime/Device.h"

#include <memory>
#include <string>
#include <vector>

namespace kiln::rt {

class Profiler {
public:
  Profiler(const Event &origin, int sessionId) : origin_(origin), sessionId_(sessionId) {}

  /// Brackets one operation on `stream`: call begin, enqueue it, call end.
  void begin(CUstream stream, std::string name, std::string kind);
  void end(CUstream stream);
  /// After the stream is synchronized: turns this run's events into records.
  void finishRun();

  std::vector<KernelProfile> table() const;
  std::vector<TraceEvent> events() const;
  std::string tableText() const;
  std::string chromeTrace() const;
  void reset();

private:
  struct Record {
    std::string name, kind;
    double startMs = 0, durationMs = 0;
    int run = 0;
  };
  struct Pending {
    std::string name, kind;
    size_t events; // index of the begin event; end is events + 1
  };
  const Event &origin_;
  int sessionId_;
  std::vector<std::unique_ptr<Event>> pool_;
  std::vector<Pending> pending_;
  std::vector<Record> records_;
  std::vector<double> runSpansMs_;
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_PROFILER_H

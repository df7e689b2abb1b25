// `kiln tune` as a pipeline of its stages: open the tuning (open_tuning.hpp), search
// (search_loop.hpp), select (choose.hpp), publish (publish.hpp).
#include "tune.hpp"

#include <ostream>

#include "choose.hpp"
#include "kiln/worklog/markdown.hpp"
#include "open_tuning.hpp"
#include "process.hpp"
#include "publish.hpp"
#include "search_loop.hpp"
#include "stage_clock.hpp"

namespace kiln::tuner {

void tune(const TuneOptions& o, std::ostream& out, std::ostream& err) {
  install_interrupt_handlers();
  StageClock clock;
  std::unique_ptr<Tuning> t = open_tuning(o, out);
  clock.lap("open");
  const double compiled_before = t->compiler ? t->compiler->total().seconds : 0;
  clock.add("compile", 0);
  SearchResult searched = run_search(*t, o.progress, out);
  clock.lap("search");
  if (t->compiler) clock.move("search", "compile", t->compiler->total().seconds - compiled_before);

  const Manifest& m = t->target.manifest;
  if (o.shard) {
    t->log->end_session(t->session_id, clock.stages());
    print_shard_summary(m, *o.shard, searched.outcomes, searched.ran, t->log->path(), out);
    out << "kiln: " << m.kernel << " shard " << o.shard->text() << ": wall time " << worklog::stages_line(clock.stages())
        << "\n";
    return;
  }
  if (std::size_t earlier = add_worklog_outcomes(t->ctx, searched.outcomes)) {
    out << "kiln: " << m.kernel << ": " << earlier << " variant" << (earlier == 1 ? "" : "s")
        << " this search did not propose, measured in this context before, chosen from too (from the worklog)\n";
  }
  SelectionInput in{&m, &*t->log, t->ctx.context_key, t->target.spec.name, t->context.device, t->context.rates,
                    t->searcher->name()};
  Record record = choose_and_sanitize(t->ctx, in, searched.outcomes, o, out, clock);

  publish(m, record, {o.record_out, o.record_copies, o.header_out}, out, err);
  clock.lap("publish");
  t->log->end_session(t->session_id, clock.stages());
  print_summary(m, record, searched.outcomes.size(), searched.ran, out);
  out << "kiln: " << m.kernel << ": wall time " << worklog::stages_line(clock.stages()) << "\n";
}

}  // namespace kiln::tuner

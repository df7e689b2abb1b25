// `kiln tune` as a pipeline of its stages: open the tuning (open_tuning.hpp), search
// (search_loop.hpp), select (choose.hpp), publish (publish.hpp).
#include "tune.hpp"

#include <ostream>

#include "choose.hpp"
#include "open_tuning.hpp"
#include "process.hpp"
#include "publish.hpp"
#include "search_loop.hpp"

namespace kiln::tuner {

void tune(const TuneOptions& o, std::ostream& out, std::ostream& err) {
  install_interrupt_handlers();
  std::unique_ptr<Tuning> t = open_tuning(o, out);
  SearchResult searched = run_search(*t, o.progress, out);

  const Manifest& m = t->target.manifest;
  if (o.shard) {
    t->log->end_session(t->session_id);
    print_shard_summary(m, *o.shard, searched.outcomes, searched.ran, t->log->path(), out);
    return;
  }
  if (std::size_t earlier = add_worklog_outcomes(t->ctx, searched.outcomes)) {
    out << "kiln: " << m.kernel << ": " << earlier << " variant" << (earlier == 1 ? "" : "s")
        << " this search did not propose, measured in this context before, chosen from too (from the worklog)\n";
  }
  SelectionInput in{&m, &*t->log, t->ctx.context_key, t->target.spec.name, t->context.device, t->context.rates,
                    t->searcher->name()};
  Record record = choose_and_sanitize(t->ctx, in, searched.outcomes, o, out);

  publish(m, record, {o.record_out, o.record_copies, o.header_out}, out, err);
  t->log->end_session(t->session_id);
  print_summary(m, record, searched.outcomes.size(), searched.ran, out);
}

}  // namespace kiln::tuner

#include "rebuild.hpp"

#include <ostream>

#include "choose.hpp"
#include "evaluate.hpp"
#include "kiln/error.hpp"
#include "kiln/worklog/worklog.hpp"
#include "open_tuning.hpp"
#include "publish.hpp"
#include "select.hpp"

namespace kiln::tuner {

void rebuild_record(const RebuildOptions& o, std::ostream& out, std::ostream& err) {
  const KernelTarget target = load_target(o.manifest, o.device_spec);
  const Manifest& m = target.manifest;
  auto log = worklog::Worklog::open(o.worklog, worklog::OpenMode::read_only);
  std::optional<worklog::Session> latest;
  // The latest by its start (then its id): a merged worklog's ids follow the order of its inputs.
  for (const auto& s : log.sessions()) {
    if (s.kernel == m.kernel && (!latest || s.started_at >= latest->started_at)) latest = s;
  }
  if (!latest) throw Error(o.worklog.string() + " has no tuning session of kernel " + m.kernel);
  // The rates of the context's first session, as `kiln tune` uses them.
  const ContextRates context = context_rates(log, m, target.spec, latest->context_key, std::nullopt);

  EvaluationContext ctx;
  ctx.manifest = &m;
  ctx.log = &log;
  ctx.context_key = latest->context_key;
  ctx.key_version = key_version_from(latest->key_version);
  ctx.measure = false;
  std::vector<VariantOutcome> outcomes;
  for (std::size_t i = 0; i < m.variants.size(); ++i) outcomes.push_back(evaluate_variant(ctx, i));

  SelectionInput in{&m, &log, latest->context_key, target.spec.name, context.device, context.rates, latest->strategy};
  const Record record = choose_record(ctx, in, outcomes, 0, out);
  publish(m, record, {o.record_out, {}, o.header_out}, out, err);
  out << "kiln: " << m.kernel << ": record of " << record.device_name << " rebuilt from " << o.worklog.string() << " ("
      << record.counts.value("evaluated", 0) << " of " << m.variants.size() << " variants measured) -> "
      << o.record_out.string() << "\n";
}

}  // namespace kiln::tuner

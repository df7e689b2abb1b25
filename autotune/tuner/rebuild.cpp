#include "rebuild.hpp"

#include <ostream>

#include "device_spec.hpp"
#include "domain.hpp"
#include "evaluate.hpp"
#include "header.hpp"
#include "kiln/worklog/worklog.hpp"
#include "manifest.hpp"
#include "select.hpp"

namespace kiln::tuner {

int rebuild_record(const RebuildOptions& o, std::ostream& out, std::ostream& err) {
  try {
    Manifest m = load_manifest(o.manifest);
    Device spec = load_device(o.device_spec);
    auto log = worklog::Worklog::open(o.worklog, worklog::OpenMode::read_only);
    std::optional<worklog::Session> latest;
    for (const auto& s : log.sessions()) {
      if (s.kernel == m.kernel) latest = s;
    }
    if (!latest) throw std::runtime_error(o.worklog.string() + " has no tuning session of kernel " + m.kernel);
    // The rates of the context's first session, as `kiln tune` uses them.
    nlohmann::ordered_json device = nlohmann::ordered_json::parse(latest->device);
    for (const auto& s : log.sessions()) {
      if (s.kernel == m.kernel && s.context_key == latest->context_key) {
        device = nlohmann::ordered_json::parse(s.device);
        break;
      }
    }
    std::map<std::string, double> rates = spec.rates;
    const nlohmann::ordered_json measured = device.value("measured", nlohmann::ordered_json::object());
    for (const auto& [key, value] : measured.items()) {
      if (value.get<double>() > 0) rates[key] = value.get<double>();
    }

    EvaluationContext ctx;
    ctx.manifest = &m;
    ctx.log = &log;
    ctx.context_key = latest->context_key;
    ctx.measure = false;
    std::vector<VariantOutcome> outcomes;
    for (std::size_t i = 0; i < m.variants.size(); ++i) outcomes.push_back(evaluate_variant(ctx, i));

    SelectionInput in{&m, &log, latest->context_key, spec.name, device, rates, latest->strategy};
    Record record = select_winners(in, outcomes, [&](std::size_t v) { return variant_hash(ctx, v); });
    time_coverage(ctx, outcomes, 0, out);
    fit_domain(ctx, outcomes, rates, record, out);
    write_if_changed(o.record_out, record_text(record));
    if (o.header_out) {
      std::vector<std::string> warnings;
      write_if_changed(*o.header_out, dispatch_header(m, record, warnings));
      for (const auto& w : warnings) err << "kiln: warning: " << w << "\n";
    }
    out << "kiln: " << m.kernel << ": record of " << record.device_name << " rebuilt from " << o.worklog.string() << " ("
        << record.counts.value("evaluated", 0) << " of " << m.variants.size() << " variants measured) -> "
        << o.record_out.string() << "\n";
    return 0;
  } catch (const std::exception& e) {
    err << "kiln: error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace kiln::tuner
